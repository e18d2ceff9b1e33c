/** Jest runs TypeScript through SWC (type checking is `npm run typecheck`, part of `npm test`). */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/test'],
  testMatch: ['**/*.test.ts'],
  transform: { '^.+\\.ts$': ['@swc/jest', { jsc: { parser: { syntax: 'typescript' }, target: 'es2022' }, module: { type: 'commonjs' } }] },
  testTimeout: 30000,
  maxWorkers: 2,
  reporters: ['default', '<rootDir>/test/support/summary-reporter.js'],
};
