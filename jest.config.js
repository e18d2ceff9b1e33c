/** Jest runs TypeScript through SWC (type checking is `npm run typecheck`, part of `npm test`). */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/test'],
  testMatch: ['**/*.test.ts'],
  transform: { '^.+\\.ts$': ['@swc/jest', { jsc: { parser: { syntax: 'typescript' }, target: 'es2022' }, module: { type: 'commonjs' } }] },
  testTimeout: 30000,
  maxWorkers: 2,
  // Every test file gets a fresh worker process (0: always restart). Files share a worker
  // otherwise, and a worker's RSS grows with every file it ran: in a fresh clone (no timing cache, so
  // another order) the fuzz test started at 1.1 GB RSS and tripped its 1.5 GB bound, against ~0.4 GB
  // alone. (A byte limit would not help: jest compares it with heapUsed, not RSS.)
  workerIdleMemoryLimit: 0,
  reporters: ['default', '<rootDir>/test/support/summary-reporter.js'],
};
