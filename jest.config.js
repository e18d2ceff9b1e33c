/** Jest runs TypeScript through SWC (type checking is `npm run typecheck`, part of `npm test`). */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/test'],
  testMatch: ['**/*.test.ts'],
  // Redis high availability (the Cluster's chaos, and the Sentinel failovers that lose a tail, 40 s
  // of the suite's time): `npm run test:redis-ha`, not the suite, which must stay under 8 minutes.
  testPathIgnorePatterns: [
    '/node_modules/',
    '<rootDir>/test/redis-ha/',
    '<rootDir>/test/scale/sentinel.test.ts',
    '<rootDir>/test/server/idempotency-failover.test.ts',
  ],
  transform: {
    '^.+\\.ts$': [
      '@swc/jest',
      { jsc: { parser: { syntax: 'typescript' }, target: 'es2022' }, module: { type: 'commonjs' } },
    ],
  },
  testTimeout: 30000,
  // Four on two cores: most files wait on processes, leases and timers, not the CPU (with two
  // workers the run used about one core on average: 8m42s of CPU in 9m13s). Three took jest from
  // 503 s to 370 s here; with the volume doctor's tests three took 465 s and four 428 s, all passing.
  maxWorkers: 4,
  // Workers are reused across files; one whose heap passed this after a file is replaced. The files
  // that judge their worker's own memory (the fuzz test's RSS bound) start first, on fresh workers
  // (test/support/sequencer.js): a reused worker's RSS grows with every file it ran (in a fresh
  // clone the fuzz test once started at 1.1 GB RSS against ~0.4 GB alone). jest compares this
  // with heapUsed, not RSS.
  workerIdleMemoryLimit: '768MB',
  testSequencer: '<rootDir>/test/support/sequencer.js',
  reporters: ['default', '<rootDir>/test/support/summary-reporter.js'],
};
