/**
 * The Nomad watcher and its backend's breaker (docs/reliability.md R4): DEGRADED as soon as the
 * breaker opens, without waiting for the heartbeat allowance, and STREAMING again once the stream
 * that held meanwhile sends a line while the breaker no longer holds it open. The stopped-process
 * version of this is test/gateway/hung-backend.test.ts.
 */
import { BREAKER_DEFAULTS, BreakerBoard } from '../../adapters/http/breaker';
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

  it('should report DEGRADED when the breaker opens, then STREAMING on the next line once it is no longer open', async () => {
    const breakers = new BreakerBoard({ ...BREAKER_DEFAULTS, openMs: 400 });
    // Heartbeats every 100 ms; a heartbeat allowance far beyond the test, so only the breaker can degrade it.
    t = await startWatch({ sim: { eventHeartbeatMs: 100 }, tuning: { heartbeatTimeoutMs: 600_000 }, backend: { breakers } });
    await t.until(() => t!.watcher.status().state === 'STREAMING', 'STREAMING');
    const breaker = breakers.get('east', 'nomad');
    const opened = Date.now();
    for (let i = 0; i < 5; i++) {
      breaker.admit();
      breaker.record('failure');
    }
    expect(t.watcher.status()).toMatchObject({ state: 'DEGRADED', message: expect.stringMatching(/the nomad breaker of backend "east" is open \(5 failures in a row\)/) });
    expect(t.watcher.current).toBe(false);
    // Lines keep coming, but while the breaker is open the watcher stays DEGRADED.
    await new Promise((r) => setTimeout(r, 250));
    if (breaker.state === 'OPEN') expect(t.watcher.status().state).toBe('DEGRADED');
    // Half-open after 400 ms: the next heartbeat brings it back.
    await t.until(() => t!.watcher.status().state === 'STREAMING', 'STREAMING again');
    expect(Date.now() - opened).toBeGreaterThanOrEqual(350);
    expect(t.watcher.current).toBe(true);
  });

  it('should reconnect at once when the breaker closes while the stream has been silent since it opened', async () => {
    const breakers = new BreakerBoard({ ...BREAKER_DEFAULTS, openMs: 200 });
    // No heartbeat within the test: only the breaker's closing can end the DEGRADED.
    t = await startWatch({ sim: { eventHeartbeatMs: 600_000 }, tuning: { heartbeatTimeoutMs: 600_000 }, backend: { breakers } });
    await t.until(() => t!.watcher.status().state === 'STREAMING', 'STREAMING');
    const breaker = breakers.get('east', 'nomad');
    for (let i = 0; i < 5; i++) breaker.record('failure', breaker.admit());
    expect(t.watcher.status().state).toBe('DEGRADED');
    const lists = t.sim.requests().filter((r) => r.path === '/v1/volumes').length;
    await new Promise((r) => setTimeout(r, 250));
    breaker.record('success', breaker.admit()); // the half-open probe succeeds
    await t.until(() => t!.statuses.some((s) => /breaker closed but the stream has sent nothing/.test(s.message ?? '')), 'the reconnect');
    await t.until(() => t!.watcher.status().state === 'STREAMING', 'STREAMING after the reconnect');
    expect(t.sim.requests().filter((r) => r.path === '/v1/volumes').length).toBeGreaterThan(lists);
  });
});
