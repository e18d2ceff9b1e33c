/**
 * When the OpenStack watcher reads, against the real simulator's request log: not at all while
 * nobody listens (IDLE), at once when someone starts, fast while something is pending or a
 * transition is in its window (a volume left in one status stops counting: R17), slow otherwise; failures degrade and back off with the view kept; a revoked service token is
 * replaced; stop() leaves nothing running.
 */
import type { VolumeRef } from '../../adapters/contract/model';
import { call, sleep } from '../simulators/openstack-helpers';
import { apiRequests, deltasOf, listCalls, startWatchCloud, watch, type WatchCloud } from './openstack-watch-helpers';
import { until } from '../support/until';

const WITHIN = 15_000;
/** How long "nothing happens" is watched for: many fast intervals. */
const QUIET_MS = 400;

describe('OpenStack watcher: adaptive polling', () => {
  let c: WatchCloud;
  beforeEach(async () => {
    c = await startWatchCloud('admin', { delays: { extendMs: 800 } });
  });
  afterEach(() => c.close());

  it('should send nothing while nobody listens and nothing is pending, read at once when someone starts, and stop again', async () => {
    const r = watch(c, { fastMs: 20, slowMs: 60_000 });
    r.w.start();
    expect(r.w.status()).toMatchObject({ state: 'IDLE', currentAt: null });
    await sleep(QUIET_MS);
    expect(c.sim.requests()).toEqual([]); // not even Keystone
    expect(r.w.current).toBe(false);

    // The slow interval is a minute: only "at once" can explain a read now.
    r.w.setDemand({ subscribers: 3, pendingVolumes: [], pendingServers: [] });
    await until(() => r.w.current, 'r.w.current', WITHIN);
    expect(listCalls(c)).toHaveLength(1);

    r.w.setDemand({ subscribers: 0, pendingVolumes: [], pendingServers: [] });
    expect(r.w.status().state).toBe('IDLE');
    expect(r.w.current).toBe(false);
    await sleep(QUIET_MS); // a read already under way finishes
    const n = apiRequests(c).length;
    await sleep(QUIET_MS);
    expect(apiRequests(c)).toHaveLength(n);

    // What changed while nobody listened is reported when someone listens again.
    const id = c.sim.seedVolume({ project: 'other', name: 'made-while-idle' });
    r.w.setDemand({ subscribers: 1, pendingVolumes: [], pendingServers: [] });
    expect(r.w.current).toBe(false);
    await until(() => r.w.current, 'r.w.current', WITHIN);
    expect(r.deltas.map((d) => [d.before, d.after?.ref.nativeId])).toEqual([[null, id]]);
    expect(r.statuses.map((s) => s.status.state)).toEqual([
      'IDLE',
      'STARTING',
      'POLLING',
      'IDLE',
      'RESYNCING',
      'POLLING',
    ]);
  });

  it('should poll fast while an operation is pending or a volume is in motion, and slow otherwise', async () => {
    const id = c.sim.seedVolume({ project: 'demo', name: 'grows', size: 1 });
    const ref: VolumeRef = { backend: 'os', namespace: c.p.demo, nativeId: id };
    const r = watch(c, { fastMs: 20, slowMs: 60_000 });
    r.w.setDemand({ subscribers: 1, pendingVolumes: [], pendingServers: [] });
    r.w.start();
    await until(() => r.w.current, 'r.w.current', WITHIN);
    // Nothing moves: the next read is a minute away.
    await sleep(QUIET_MS);
    expect(listCalls(c)).toHaveLength(1);

    // A pending operation: fast until it is no longer pending.
    r.w.setDemand({ subscribers: 1, pendingVolumes: [ref], pendingServers: [] });
    await until(() => listCalls(c).length >= 5, 'listCalls(c).length >= 5', WITHIN);
    r.w.setDemand({ subscribers: 1, pendingVolumes: [], pendingServers: [] });
    await sleep(QUIET_MS); // a read already under way finishes
    const settled = listCalls(c).length;
    await sleep(QUIET_MS);
    expect(listCalls(c)).toHaveLength(settled);

    // A change started elsewhere: one nudge, then the transitional status itself keeps it fast.
    const res = await call(`${c.cinder.demo}/volumes/${id}/action`, 'POST', {
      token: c.t.demo,
      body: { 'os-extend': { new_size: 2 } },
    });
    expect(res.status).toBe(202);
    r.w.nudge([ref]);
    await until(
      () => deltasOf(r, id).some((d) => d.after?.status === 'AVAILABLE' && d.after.sizeBytes === 2 * 1024 ** 3),
      "deltasOf(r, id).some((d) => d.after?.status === 'AVAILABLE' && d.after.sizeBytes === 2 * 1024 ** 3)",
      WITHIN,
    );
    const seen = deltasOf(r, id).map((d) => d.after!.backendStatus);
    expect(seen).toEqual(['extending', 'available']);
    // Reads between the two: fast ones while `extending` (the sim takes 800 ms; a minute-slow watcher would have read once).
    expect(listCalls(c).length - settled).toBeGreaterThanOrEqual(3);
    await sleep(QUIET_MS);
    const after = listCalls(c).length;
    await sleep(QUIET_MS);
    expect(listCalls(c)).toHaveLength(after);
  });

  it('should stop polling fast for a volume a tenant leaves reserved once its window has passed, and start a new window on its next transition (R17)', async () => {
    const WINDOW = 500;
    const id = c.sim.seedVolume({ project: 'demo', name: 'held', size: 1 });
    const ref: VolumeRef = { backend: 'os', namespace: c.p.demo, nativeId: id };
    const action = async (name: string): Promise<void> => {
      const res = await call(`${c.cinder.demo}/volumes/${id}/action`, 'POST', {
        token: c.t.demo,
        body: { [name]: {} },
      });
      expect(res.status).toBe(202);
    };
    const r = watch(c, { fastMs: 20, slowMs: 60_000, transitionWindowMs: WINDOW });
    r.w.setDemand({ subscribers: 1, pendingVolumes: [], pendingServers: [] });
    r.w.start();
    await until(() => r.w.current, 'r.w.current', WITHIN);
    /** The tenant's own write, straight to Cinder (os-reserve leaves the volume `attaching` until os-unreserve); one nudge shows it to the watcher. */
    const transition = async (name: string, status: string): Promise<void> => {
      const seen = deltasOf(r, id).length;
      await action(name);
      r.w.nudge([ref]);
      await until(
        () =>
          deltasOf(r, id)
            .slice(seen)
            .some((d) => d.after?.backendStatus === status),
        `${status} seen`,
        WITHIN,
      );
    };
    /** Nothing more is read once the window has passed (the slow interval is a minute). */
    const quietAfterWindow = async (): Promise<void> => {
      await sleep(WINDOW + QUIET_MS); // past the window; a read already under way finishes
      const n = listCalls(c).length;
      await sleep(2 * QUIET_MS);
      expect(listCalls(c).length).toBe(n);
    };

    await transition('os-reserve', 'attaching');
    // Fast within the window: a minute-slow watcher would read nothing more.
    const first = listCalls(c).length;
    await until(() => listCalls(c).length >= first + 3, 'fast reads in the window', WITHIN);
    await quietAfterWindow();
    expect(r.w.volume(ref)?.backendStatus).toBe('attaching');

    // A new transition of the same volume starts a new window: fast again, then slow again.
    await transition('os-unreserve', 'available');
    await transition('os-reserve', 'attaching');
    const again = listCalls(c).length;
    await until(() => listCalls(c).length >= again + 3, 'fast reads in the new window', WITHIN);
    await quietAfterWindow();

    // An operation the gateway tracks on it keeps polling fast, whatever the window says.
    r.w.setDemand({ subscribers: 1, pendingVolumes: [ref], pendingServers: [] });
    const pending = listCalls(c).length;
    await until(() => listCalls(c).length >= pending + 5, 'fast reads while pending', WITHIN);
    r.w.setDemand({ subscribers: 1, pendingVolumes: [], pendingServers: [] });
    await sleep(QUIET_MS);
    const settled = listCalls(c).length;
    await sleep(2 * QUIET_MS);
    expect(listCalls(c).length).toBe(settled);
  });

  it('should coalesce a burst of nudges into at most two reads', async () => {
    const r = watch(c, { fastMs: 300, slowMs: 60_000 });
    r.w.setDemand({ subscribers: 1, pendingVolumes: [], pendingServers: [] });
    r.w.start();
    await until(() => r.w.current, 'r.w.current', WITHIN);
    await sleep(350);
    const n = listCalls(c).length;
    const ref: VolumeRef = { backend: 'os', namespace: c.p.demo, nativeId: '00000000-0000-4000-8000-000000000001' };
    for (let i = 0; i < 50; i++) r.w.nudge([ref], [`a0000000-0000-4000-8000-00000000000${i % 10}`]);
    await until(() => listCalls(c).length > n, 'listCalls(c).length > n', WITHIN);
    await sleep(3 * 300);
    expect(listCalls(c).length - n).toBeGreaterThanOrEqual(1);
    expect(listCalls(c).length - n).toBeLessThanOrEqual(2);
  });
});

describe('OpenStack watcher: failures', () => {
  it('should degrade with back-off and keep its view while Cinder is down, then recover', async () => {
    const c = await startWatchCloud('admin', {}, { readRetries: 0 });
    try {
      const id = c.sim.seedVolume({ project: 'demo', name: 'kept' });
      const r = watch(c, { fastMs: 20, slowMs: 40, maxBackoffMs: 100 });
      r.w.setDemand({ subscribers: 1, pendingVolumes: [], pendingServers: [] });
      r.w.start();
      await until(() => r.w.current, 'r.w.current', WITHIN);

      c.sim.unavailable({ service: 'cinder' });
      await until(() => r.w.status().state === 'DEGRADED', "r.w.status().state === 'DEGRADED'", WITHIN);
      expect(r.w.current).toBe(false);
      expect(r.w.status().message).toMatch(/unavailable|503/i);
      expect(r.statuses.find((s) => s.status.state === 'DEGRADED')?.err).toBeInstanceOf(Error);
      expect(r.w.volume({ backend: 'os', namespace: c.p.demo, nativeId: id })?.name).toBe('kept');
      expect(r.deltas).toEqual([]); // an outage is not a mass deletion

      c.sim.available('cinder');
      await until(() => r.w.current, 'r.w.current', WITHIN);
      expect(r.w.status()).toMatchObject({ state: 'POLLING', volumes: 1 });
      expect(r.deltas).toEqual([]);
    } finally {
      await c.close();
    }
  });

  it('should re-authenticate when Cinder refuses the service token (401), without degrading', async () => {
    // Cinder re-validates every token at once (no keystonemiddleware cache), so a revocation shows.
    const c = await startWatchCloud('admin', { tokenCacheMs: 0 });
    try {
      const r = watch(c, { fastMs: 20, slowMs: 60_000 });
      r.w.setDemand({ subscribers: 1, pendingVolumes: [], pendingServers: [] });
      r.w.start();
      await until(() => r.w.current, 'r.w.current', WITHIN);
      const issued = (): number =>
        c.sim.requests().filter((e) => e.service === 'keystone' && e.method === 'POST').length;
      expect(issued()).toBe(1);

      expect(c.sim.revokeUserTokens('admin')).toBeGreaterThan(0);
      const n = listCalls(c).length;
      r.w.nudge([{ backend: 'os', namespace: c.p.demo, nativeId: '00000000-0000-4000-8000-000000000001' }]);
      await until(
        () => listCalls(c).filter((e) => e.status === 200).length >= n + 1,
        'listCalls(c).filter((e) => e.status === 200).length >= n + 1',
        WITHIN,
      );
      expect(
        listCalls(c)
          .slice(n)
          .map((e) => e.status),
      ).toEqual([401, 200]);
      expect(issued()).toBe(2);
      expect(r.statuses.map((s) => s.status.state)).not.toContain('DEGRADED');
      expect(r.w.current).toBe(true);
    } finally {
      await c.close();
    }
  });
});

describe('OpenStack watcher: stop', () => {
  it('should leave no timers or sockets and read nothing more', async () => {
    const c = await startWatchCloud('admin');
    try {
      const resources = (): string[] =>
        process
          .getActiveResourcesInfo()
          .filter((x) => x === 'Timeout' || x === 'TCPSocketWrap')
          .sort();
      const baseline = resources();
      const r = watch(c, { fastMs: 20, slowMs: 20 });
      r.w.setDemand({
        subscribers: 1,
        pendingVolumes: [{ backend: 'os', namespace: c.p.demo, nativeId: '00000000-0000-4000-8000-000000000001' }],
        pendingServers: [],
      });
      r.w.start();
      await until(() => listCalls(c).length >= 3, 'listCalls(c).length >= 3', WITHIN);
      expect(resources().length).toBeGreaterThan(baseline.length);
      await r.w.stop();
      expect(r.w.status().state).toBe('STOPPED');
      const n = apiRequests(c).length;
      r.w.nudge([{ backend: 'os', namespace: c.p.demo, nativeId: '00000000-0000-4000-8000-000000000001' }]);
      r.w.setDemand({ subscribers: 5, pendingVolumes: [], pendingServers: [] });
      r.w.start();
      await sleep(QUIET_MS);
      expect(apiRequests(c)).toHaveLength(n);
      // Closed by stop(), not left to the servers' idle timeout (seconds): both ends go at once.
      await until(() => resources().length <= baseline.length, 'resources().length <= baseline.length', 1500);
    } finally {
      await c.close();
    }
  });
});
