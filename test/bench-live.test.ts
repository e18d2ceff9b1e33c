/**
 * The live-path benchmarks' short modes end to end (fan-out, live path, soak): in a file of their
 * own so the suite's two workers share the benchmarks. No timing is asserted.
 */
import { runShort, tableRows } from './support/bench-short';

it('should run the fan-out benchmark in short mode: every subscriber subscribed and received every event', () => {
  const md = runShort('bench/fanout.ts', { FANOUT_SHORT: '1' });
  const rows = tableRows(md);
  expect(rows).toHaveLength(1);
  const [asked, subscribed, failed, , , , , , delivered, rss, closes] = rows[0]!;
  expect([asked, subscribed, failed]).toEqual(['200', '200', '0']);
  const [got, owed] = delivered!.split(' / ').map(Number);
  // Two events at least per claim-and-release pair, to each of the 200 subscribers.
  expect(owed).toBeGreaterThanOrEqual(400);
  expect(got).toBe(owed);
  expect(Number(rss)).not.toBeNaN();
  expect(closes).toBe('none');
}, 180_000);

it('should run the live-path benchmark in short mode: latencies measured, backend requests flat, watch-fed reads cheaper in calls', () => {
  const md = runShort('bench/live.ts', { BENCH_LIVE_SHORT: '1' });
  const latency = md.split('\n').filter((l) => /^\| (Nomad|OpenStack) .*\| \d+ \|/.test(l)).map((l) => l.split('|').slice(1, -1).map((c) => c.trim()));
  expect(latency).toHaveLength(2);
  for (const [, samples, p50] of latency) {
    expect(Number(samples)).toBeGreaterThan(0);
    expect(Number(p50)).not.toBeNaN(); // every sample arrived (a missed event is NaN)
  }
  const load = tableRows(md);
  expect(load.map((r) => r[0])).toEqual(['1', '100']);
  // Subscribers do not add backend requests: the watcher's stream, and per credential (3) one start
  // check of the token and one access check of the namespace, each cached.
  for (const [, , , checks] of load) expect(Number(checks)).toBeLessThanOrEqual(6);
  const calls = md.split('\n').filter((l) => /^\| (no watcher|watcher)/.test(l)).map((l) => Number(l.split('|')[2]));
  expect(calls).toEqual([101, 2]);
}, 180_000);

it('should run the soak in short mode: every request and session answered as expected, heap and RSS read after each round', () => {
  const md = runShort('bench/soak.ts', { SOAK_SHORT: '1' });
  const rows = tableRows(md);
  expect(rows.map((r) => r.slice(0, 3))).toEqual([['0', '0', '0'], ['1', '400', '100'], ['2', '800', '200']]);
  for (const [, , , heap, rss] of rows) {
    expect(Number(heap)).toBeGreaterThan(0);
    expect(Number(rss)).toBeGreaterThan(0);
  }
}, 180_000);
