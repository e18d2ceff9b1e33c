/**
 * The linter and the formatter catch what they are there for, through the same commands
 * `npm run lint` and `npm run format:check` run (the project's eslint.config.mjs, .prettierrc.json
 * and .prettierignore): a floating and a misused promise, an unformatted file; and they leave
 * alone what they must (a promise voided on purpose, recorded fixtures).
 */
import { spawnSync } from 'node:child_process';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const root = join(__dirname, '..');
const bin = (name: string): string => join(root, 'node_modules', '.bin', name);

const WORK = `async function work(): Promise<number> {
  return 1;
}
`;

/** Line 5: a floating promise; line 8: an async callback where a void one is expected. */
const CARELESS = `${WORK}export function floating(): void {
  work();
}
export function misused(items: number[]): void {
  items.forEach(async () => {
    await work();
  });
}
`;

/** The same calls, handled: voided on purpose, and awaited in turn. */
const CAREFUL = `${WORK}export function fireAndForget(): void {
  // Deliberate: nothing waits for it.
  void work();
}
export async function inTurn(items: number[]): Promise<void> {
  for (const _ of items) await work();
}
`;

describe('npm test', () => {
  it('should lint and check the formatting before jest runs', () => {
    const { scripts } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
      scripts: Record<string, string>;
    };
    /** The commands `name` runs, in order, with the scripts it runs (`npm run x`, run-p's tasks) expanded. */
    const commands = (name: string): string[] =>
      scripts[name]!.split('&&').flatMap((part) => {
        const words = part.trim().split(/\s+/);
        if (words[0] === 'npm' && words[1] === 'run') return commands(words[2]!);
        if (words[0] === 'run-p' || words[0] === 'run-s')
          return words
            .slice(1)
            .filter((w) => !w.startsWith('-'))
            .flatMap(commands);
        return [part.trim()];
      });
    const steps = commands('test');
    const jest = steps.indexOf('jest');
    expect(jest).toBeGreaterThan(0);
    expect(steps.slice(0, jest)).toEqual(
      expect.arrayContaining(['eslint .', 'prettier --check .', 'tsc -p tsconfig.json --noEmit']),
    );
  });
});

describe('lint', () => {
  it('should refuse a floating promise and a misused one, and take them voided or awaited', () => {
    // The type-aware rules need the files inside the TypeScript project (tsconfig.json includes
    // test/): written there for this run only.
    const careless = join(root, 'test', `lint-probe-careless.${process.pid}.ts`);
    const careful = join(root, 'test', `lint-probe-careful.${process.pid}.ts`);
    writeFileSync(careless, CARELESS);
    writeFileSync(careful, CAREFUL);
    try {
      const run = spawnSync(bin('eslint'), ['--format', 'json', careless, careful], { cwd: root, encoding: 'utf8' });
      expect(run.stderr).toBe('');
      const results = JSON.parse(run.stdout) as Array<{
        filePath: string;
        messages: Array<{ ruleId: string | null; line: number }>;
      }>;
      const found = (file: string): string[] =>
        results.find((r) => r.filePath === file)!.messages.map((m) => `${m.ruleId}:${m.line}`);
      expect(found(careless)).toEqual([
        '@typescript-eslint/no-floating-promises:5',
        '@typescript-eslint/no-misused-promises:8',
      ]);
      expect(found(careful)).toEqual([]);
      expect(run.status).toBe(1);
    } finally {
      rmSync(careless, { force: true });
      rmSync(careful, { force: true });
    }
  }, 120_000);
});

describe('format', () => {
  /** `prettier --check` of `text` as if it were the file at `path`: its exit status. */
  const check = (path: string, text: string): number | null =>
    spawnSync(bin('prettier'), ['--check', '--stdin-filepath', path], { cwd: root, input: text, encoding: 'utf8' })
      .status;

  it('should refuse an unformatted file and take its formatted form', () => {
    expect(check('server/probe.ts', 'const greeting = "hello"\nexport  { greeting }\n')).toBe(1);
    expect(check('server/probe.ts', "const greeting = 'hello';\nexport { greeting };\n")).toBe(0);
  }, 60_000);

  it('should wrap lines past 120 characters', () => {
    const lineOf = (length: number): string => {
      const [head, tail] = ["export const words = ['", "', 'b'];"];
      return `${head}${'a'.repeat(length - head.length - tail.length)}${tail}\n`;
    };
    expect(check('server/probe.ts', lineOf(120))).toBe(0);
    expect(check('server/probe.ts', lineOf(121))).toBe(1);
  }, 60_000);

  it('should leave recorded fixtures, generated files, Markdown and GraphQL SDL as they are', () => {
    const untouched: Array<[path: string, text: string, formattedElsewhere: string | null]> = [
      ['test/fixtures/recorded/probe.json', '{"a":   1}\n', 'server/probe.json'],
      ['schema/generated/probe.ts', 'const  a = 1\n', 'server/probe.ts'],
      ['config.schema.json', '{"a":   1}\n', 'server/probe.json'],
      ['package-lock.json', '{"a":   1}\n', 'server/probe.json'],
      ['docs/probe.md', '| a | b |\n|---|---|\n| long cell | x |\n', null],
      ['schema/probe.graphql', 'type  A { a: Int }\n', null],
    ];
    // Nor the text of a template literal: embedded GraphQL is a string whose bytes tests compare.
    expect(check('server/probe.ts', 'export const query = /* GraphQL */ `{ volumes  { id } }`;\n')).toBe(0);
    for (const [path, text, elsewhere] of untouched) {
      expect([path, check(path, text)]).toEqual([path, 0]);
      if (elsewhere) expect([elsewhere, check(elsewhere, text)]).toEqual([elsewhere, 1]);
    }
  }, 60_000);
});
