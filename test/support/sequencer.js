/**
 * The order jest hands test files to its workers: jest's own (the slowest first, by the timings it
 * cached; failed ones first), except that files which judge the worker process itself start first,
 * on a fresh worker. Workers are reused across files (a fresh one per file cost about half a
 * second each, ~45 s of a run), and a reused worker's RSS grows with every file it ran; the fuzz
 * test bounds the RSS of the process it runs in (its in-process gateway), so it must not inherit
 * another file's. jest starts `maxWorkers` workers and gives each its first file in this order.
 */
const Sequencer = require('@jest/test-sequencer').default;

/** Files that measure the jest worker's own memory: each gets a fresh worker (at most `maxWorkers` of them). */
const FRESH_WORKER_FIRST = ['test/fuzz/fuzz.test.ts'];

class FreshFirstSequencer extends Sequencer {
  sort(tests) {
    const sorted = super.sort(tests);
    const first = (t) => FRESH_WORKER_FIRST.some((f) => t.path.endsWith(f));
    return [...sorted.filter(first), ...sorted.filter((t) => !first(t))];
  }
}

module.exports = FreshFirstSequencer;
module.exports.FRESH_WORKER_FIRST = FRESH_WORKER_FIRST;
