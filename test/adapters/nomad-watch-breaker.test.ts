/**
 * The Nomad watcher and its backend's breaker (docs/reliability.md R4, R20): DEGRADED as soon as
 * the breaker opens, without waiting for the heartbeat allowance, and STREAMING again once the
 * probe (played here by the test) closes it: at once when the stream held meanwhile, after a
 * reconnect when it did not. Refusals of an open breaker never send it to blocking queries, and a
 * closing breaker brings a watcher on blocking queries back to the stream. The stopped-process
 * version of this is test/gateway/hung-backend.test.ts.
 */
import { BREAKER_DEFAULTS, BreakerBoard } from '../../adapters/contract/breaker';
import { withDefaults } from '../../adapters/nomad/watch/tuning';
import { startWatch, type WatchUnderTest } from './nomad-watch-helpers';

describe('the Nomad watcher and its breaker', () => {
  let t: WatchUnderTest | undefined;
  afterEach(async () => {
    await t?.stop();
    t = undefined;
  });

  it('should allow 45 s of silence by default (Nomad beats every 30 s)', () => {
    expect(withDefaults({}).heartbeatTimeoutMs).toBe(45_000);
  });

  it('should report DEGRADED when the breaker opens and stay so while it is not closed, then STREAMING when the probe closes it', async () => {
    const breakers = new BreakerBoard({ ...BREAKER_DEFAULTS, openMs: 200 });
    // Heartbeats every 100 ms; a heartbeat allowance far beyond the test, so only the breaker can degrade it.
    t = await startWatch({
      sim: { eventHeartbeatMs: 100 },
      tuning: { heartbeatTimeoutMs: 600_000 },
      backend: { breakers },
    });
    await t.until(() => t!.watcher.status().state === 'STREAMING', 'STREAMING');
    const breaker = breakers.get('east', 'nomad');
    for (let i = 0; i < 5; i++) {
      breaker.admit();
      breaker.record('failure');
    }
    expect(t.watcher.status()).toMatchObject({
      state: 'DEGRADED',
      message: expect.stringMatching(/the nomad breaker of backend "east" is open \(5 failures in a row\)/),
    });
    expect(t.watcher.current).toBe(false);
    // Lines keep coming, past the open time too: until a probe closes the breaker the watcher stays DEGRADED.
    await new Promise((r) => setTimeout(r, 400));
    expect(t.watcher.status().state).toBe('DEGRADED');
    breaker.record('success', breaker.admit(true)); // the background probe
    await t.until(() => t!.watcher.status().state === 'STREAMING', 'STREAMING again');
    expect(t.watcher.current).toBe(true);
  });

  it('should reconnect at once when the breaker closes while the stream has been silent since it opened', async () => {
    const breakers = new BreakerBoard({ ...BREAKER_DEFAULTS, openMs: 200 });
    // No heartbeat within the test: only the breaker's closing can end the DEGRADED.
    t = await startWatch({
      sim: { eventHeartbeatMs: 600_000 },
      tuning: { heartbeatTimeoutMs: 600_000 },
      backend: { breakers },
    });
    await t.until(() => t!.watcher.status().state === 'STREAMING', 'STREAMING');
    const breaker = breakers.get('east', 'nomad');
    for (let i = 0; i < 5; i++) breaker.record('failure', breaker.admit());
    expect(t.watcher.status().state).toBe('DEGRADED');
    const lists = t.sim.requests().filter((r) => r.path === '/v1/volumes').length;
    await new Promise((r) => setTimeout(r, 250));
    breaker.record('success', breaker.admit(true)); // the probe succeeds
    await t.until(
      () => t!.statuses.some((s) => /breaker closed but the stream has sent nothing/.test(s.message ?? '')),
      'the reconnect',
    );
    await t.until(() => t!.watcher.status().state === 'STREAMING', 'STREAMING after the reconnect');
    expect(t.sim.requests().filter((r) => r.path === '/v1/volumes').length).toBeGreaterThan(lists);
  });

  it('should not fall back to blocking queries while the breaker refuses it, and stream again as soon as the probe closes it', async () => {
    const breakers = new BreakerBoard({ ...BREAKER_DEFAULTS, openMs: 100 });
    t = await startWatch({
      sim: { eventHeartbeatMs: 100 },
      tuning: { streamFailuresBeforeFallback: 2, maxBackoffMs: 60_000 },
      backend: { breakers },
    });
    await t.until(() => t!.watcher.status().state === 'STREAMING', 'STREAMING');
    const breaker = breakers.get('east', 'nomad');
    for (let i = 0; i < 5; i++) breaker.record('failure', breaker.admit());
    // The stream ends: every reconnect's list is refused by the open breaker, more times than the fallback allows.
    t.sim.closeStreams();
    await t.until(
      () => t!.statuses.filter((s) => /circuit breaker is open/.test(s.message ?? '')).length >= 1,
      'a refused reconnect',
    );
    await new Promise((r) => setTimeout(r, 300));
    expect(t.watcher.status()).toMatchObject({ state: 'DEGRADED', source: 'EVENT_STREAM' });
    const closed = Date.now();
    breaker.record('success', breaker.admit(true));
    // Not after a backoff (60 s here): the closing wakes it.
    await t.until(() => t!.watcher.status().state === 'STREAMING', 'STREAMING after the probe', 5_000);
    expect(t.watcher.status().source).toBe('EVENT_STREAM');
    expect(Date.now() - closed).toBeLessThan(5_000);
  });

  it('should leave blocking queries for the event stream when a breaker closes, not after its retry time', async () => {
    const breakers = new BreakerBoard({ ...BREAKER_DEFAULTS, openMs: 100 });
    t = await startWatch({
      sim: { eventHeartbeatMs: 100 },
      tuning: { blockingWaitMs: 60_000, streamRetryMs: 600_000 },
      backend: { breakers },
      start: false,
    });
    // Denied with both topics, then with CSIVolume alone: the watcher follows blocking queries.
    t.sim.failNext({ count: 2, status: 403, body: 'Permission denied', pathPrefix: '/v1/event/stream' });
    t.watcher.start();
    await t.until(() => t!.watcher.status().state === 'POLLING', 'POLLING');
    const breaker = breakers.get('east', 'nomad');
    for (let i = 0; i < 5; i++) breaker.record('failure', breaker.admit());
    await new Promise((r) => setTimeout(r, 150));
    breaker.record('success', breaker.admit(true));
    // The blocking query under way (60 s) is cut and the stream (no longer denied) opened.
    await t.until(
      () => t!.watcher.status().state === 'STREAMING' && t!.watcher.status().source === 'EVENT_STREAM',
      'STREAMING',
      5_000,
    );
  });
});
