// @ts-check
/**
 * ESLint: JavaScript's recommended rules and typescript-eslint's type-aware recommended rules
 * (`recommendedTypeChecked`), on every file of the repository. `npm run lint` runs it; `npm test`
 * runs it before jest. A rule is off or narrowed only below, each with its reason; a single line that
 * is deliberately different says so with `// eslint-disable-next-line <rule> -- <reason>`.
 */
import js from '@eslint/js';
import { defineConfig } from 'eslint/config';
import globals from 'globals';
import tseslint from 'typescript-eslint';

export default defineConfig(
  {
    // Built or generated output, and bundles: not source.
    ignores: ['dist/**', 'coverage/**', '.bench-build*/**', '.bench-tmp/**', 'schema/generated/**'],
  },
  {
    // A disable comment that no longer disables anything is stale: it fails the lint.
    linterOptions: { reportUnusedDisableDirectives: 'error' },
  },
  js.configs.recommended,
  tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      // The two bugs of an async server this linter is here for (both in the recommended set; named
      // so that no later preset can drop them). A deliberate fire-and-forget call says so with `void`.
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      // A leading underscore marks a name as deliberately unused (a parameter an interface passes, a
      // property split off a rest object), as tsc's noUnusedParameters already allows.
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrorsIgnorePattern: '^_', ignoreRestSiblings: true },
      ],
      // A rejection may pass on a value of unknown type unchanged (an AbortSignal's reason, typed
      // `any` by the DOM types; a caught error), as only-throw-error's defaults let a throw do; a
      // rejection with a value of a known type that is not an Error is still refused.
      '@typescript-eslint/prefer-promise-reject-errors': [
        'error',
        { allowThrowingAny: true, allowThrowingUnknown: true },
      ],
      // Off: an `async` method without `await` is how this code implements a promise-returning
      // interface (stores, Apollo plugin hooks, backend checks) whose other implementations do
      // await. Dropping `async` would turn each synchronous throw in it into an exception thrown at
      // the caller instead of a rejected promise, which callers that only `.catch` (or
      // Promise.all) do not handle.
      '@typescript-eslint/require-await': 'off',
    },
  },
  {
    // JavaScript files are not in the TypeScript project (tsconfig has no allowJs): no type-aware rules.
    files: ['**/*.js', '**/*.mjs', '**/*.cjs'],
    extends: [tseslint.configs.disableTypeChecked],
  },
  {
    // The browser bundles' entry points (esbuild bundles them; Node never loads them).
    files: ['server/graphiql/client/**/*.js', 'server/live/page/**/*.js'],
    languageOptions: { sourceType: 'module', globals: globals.browser },
  },
  {
    // Node's CommonJS: jest's configuration and its plugins.
    files: ['jest.config.js', 'test/support/**/*.js'],
    languageOptions: { sourceType: 'commonjs', globals: globals.node },
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
  {
    files: ['eslint.config.mjs'],
    languageOptions: { globals: globals.node },
  },
  {
    // Tests (with each backend's contract fixture, adapters/<kind>/testing/), benchmarks and scripts
    // read JSON answers (GraphQL responses, backend bodies, recorded fixtures) as `any` and walk
    // them; the assertions after them check the shape, so typing each answer first would add a cast
    // per read and catch nothing the assertion does not.
    files: ['test/**', 'bench/**', 'scripts/**', 'adapters/*/testing/**'],
    rules: {
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
    },
  },
);
