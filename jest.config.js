/** Jest runs TypeScript through SWC (type checking is `npm run typecheck`, part of `npm test`). */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/test'],
  testMatch: ['**/*.test.ts'],
  // Redis high-availability chaos (a Cluster's failover): `npm run test:redis-ha`, not the suite.
  testPathIgnorePatterns: ['/node_modules/', '<rootDir>/test/redis-ha/'],
  transform: {
    '^.+\\.ts$': [
      '@swc/jest',
      { jsc: { parser: { syntax: 'typescript' }, target: 'es2022' }, module: { type: 'commonjs' } },
    ],
  },
  testTimeout: 30000,
  maxWorkers: 2,
  // Workers are reused across files; one whose heap passed this after a file is replaced. The files
  // that judge their worker's own memory (the fuzz test's RSS bound) start first, on fresh workers
  // (test/support/sequencer.js): a reused worker's RSS grows with every file it ran (in a fresh
  // clone the fuzz test once started at 1.1 GB RSS against ~0.4 GB alone). jest compares this
  // with heapUsed, not RSS.
  workerIdleMemoryLimit: '768MB',
  testSequencer: '<rootDir>/test/support/sequencer.js',
  reporters: ['default', '<rootDir>/test/support/summary-reporter.js'],
};
