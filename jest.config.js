/** Jest runs TypeScript through SWC (type checking is `npm run typecheck`, part of `npm test`). */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/test'],
  testMatch: ['**/*.test.ts'],
  transform: { '^.+\\.ts$': ['@swc/jest', { jsc: { parser: { syntax: 'typescript' }, target: 'es2022' }, module: { type: 'commonjs' } }] },
  testTimeout: 30000,
  maxWorkers: 2,
  // A worker that holds more than this after a test file is replaced: test files run in whatever
  // worker is free, so without it one worker's RSS grows with every file it ran (the fuzz test's RSS
  // bound then measures its neighbours: 1.1-1.5 GB in a fresh clone against ~0.4 GB alone).
  workerIdleMemoryLimit: '768MB',
  reporters: ['default', '<rootDir>/test/support/summary-reporter.js'],
};
