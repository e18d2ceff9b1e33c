/**
 * The Nomad watcher's fallback to blocking queries, its availability, and the subscriber access
 * check (`checkAccess`) against the simulator's ACLs over HTTP.
 */
import { UnauthenticatedError } from '../../adapters/contract/errors';
import {
  ANALYTICS_READ,
  MGMT,
  NODE1,
  rejection,
  seedVolume,
  startNomadBackend,
  type NomadUnderTest,
} from './nomad-helpers';
import { startWatch, type WatchUnderTest } from './nomad-watch-helpers';

describe('Nomad watcher: fallback to blocking queries', () => {
  let t: WatchUnderTest;
  afterEach(async () => {
    await t?.stop();
  });

  it('follows blocking queries when the event endpoint is denied, claims and allocation changes included', async () => {
    t = await startWatch({
      tuning: { blockingWaitMs: 200, claimRefreshMs: 0, streamRetryMs: 600_000 },
      seed: (u) => seedVolume(u.sim, 'db'),
    });
    // Denied with both topics, then with CSIVolume alone: fallback.
    t.sim.failNext({ count: 2, status: 403, body: 'Permission denied', pathPrefix: '/v1/event/stream' });
    await t.until(() => t.watcher.status().state === 'POLLING' && t.watcher.current, 'POLLING');
    expect(t.watcher.status()).toMatchObject({ source: 'BLOCKING_QUERY', volumes: 1 });
    const tried = t.sim
      .requests()
      .filter((q) => q.path === '/v1/event/stream')
      .map((q) => q.query.topic);
    expect(tried).toEqual([['CSIVolume', 'Allocation'], ['CSIVolume']]);

    const alloc = t.sim.placeAllocation({
      jobId: 'j',
      nodeId: NODE1,
      clientStatus: 'pending',
      volumes: [{ volumeId: 'db', mode: 'write' }],
    });
    await t.until(() => t.watcher.volume(t.ref('db'))?.attachments[0]?.state === 'ATTACHING', 'the claim');
    t.sim.setAllocationStatus(alloc, { clientStatus: 'running' });
    await t.until(() => t.watcher.volume(t.ref('db'))?.attachments[0]?.state === 'ATTACHED', 'the allocation change');
    seedVolume(t.sim, 'late', 'analytics');
    await t.until(() => t.of('late').length === 1, 'the create');
    const lists = t.sim.requests().filter((q) => q.path === '/v1/volumes' && q.query.index);
    expect(lists.length).toBeGreaterThan(1);
    expect(lists.at(-1)!.query).toMatchObject({ type: ['csi'], namespace: ['*'], wait: ['200ms'] });
    expect(Number(lists.at(-1)!.query.index![0])).toBeGreaterThan(0);
  });

  it('falls back when the stream fails again and again, and tries it again later', async () => {
    t = await startWatch({ tuning: { streamFailuresBeforeFallback: 2, blockingWaitMs: 100, streamRetryMs: 500 } });
    t.sim.failNext({ count: 2, status: 500, body: 'rpc error: no leader', pathPrefix: '/v1/event/stream' });
    await t.until(() => t.statuses.some((s) => s.source === 'BLOCKING_QUERY' && s.state === 'POLLING'), 'the fallback');
    await t.until(
      () => t.watcher.status().source === 'EVENT_STREAM' && t.watcher.status().state === 'STREAMING',
      'the stream again',
    );
    seedVolume(t.sim, 'after');
    await t.until(() => t.of('after').length === 1, 'a change on the stream');
  });
});

describe('Nomad watcher: availability', () => {
  it('is unavailable without a service token, with the reason', async () => {
    const u = await startNomadBackend();
    try {
      const w = u.backend.createWatcher({ onDeltas: () => undefined });
      expect(w).toEqual({ unavailable: expect.stringMatching(/no service token/) });
      expect(await u.backend.serviceCredential()).toBeNull();
    } finally {
      await u.stop();
    }
  });
});

describe('NomadBackend.checkAccess', () => {
  let u: NomadUnderTest;
  beforeAll(async () => {
    u = await startNomadBackend({}, { token: MGMT });
    seedVolume(u.sim, 'd1');
    seedVolume(u.sim, 'a1', 'analytics');
    u.sim.addToken({ secret: 'revoked-soon', namespaces: { analytics: 'read' } });
  });
  afterAll(async () => {
    await u.stop();
  });

  it('allows the namespace a token reads (also for a volume that is gone) and denies others', async () => {
    await expect(u.backend.checkAccess('analytics', u.ref('a1', 'analytics'), u.as(ANALYTICS_READ))).resolves.toEqual({
      allowed: true,
      admin: false,
    });
    await expect(u.backend.checkAccess('analytics', u.ref('gone', 'analytics'), u.as(ANALYTICS_READ))).resolves.toEqual(
      { allowed: true, admin: false },
    );
    await expect(u.backend.checkAccess('default', u.ref('d1'), u.as(ANALYTICS_READ))).resolves.toEqual({
      allowed: false,
      admin: false,
    });
    await expect(u.backend.checkAccess('default', u.ref('d1'), u.o)).resolves.toEqual({ allowed: true, admin: false });
  });

  it('denies an anonymous subscriber where the anonymous policy does not reach', async () => {
    await expect(u.backend.checkAccess('default', u.ref('d1'), u.as())).resolves.toEqual({
      allowed: false,
      admin: false,
    });
  });

  it('throws UnauthenticatedError for an unknown or revoked token', async () => {
    expect(
      await rejection(u.backend.checkAccess('analytics', u.ref('a1', 'analytics'), u.as('never-issued'))),
    ).toBeInstanceOf(UnauthenticatedError);
    await expect(
      u.backend.checkAccess('analytics', u.ref('a1', 'analytics'), u.as('revoked-soon')),
    ).resolves.toMatchObject({ allowed: true });
    u.sim.removeToken('revoked-soon');
    const err = await rejection(u.backend.checkAccess('analytics', u.ref('a1', 'analytics'), u.as('revoked-soon')));
    expect(err).toBeInstanceOf(UnauthenticatedError);
    expect(err.code).toBe('UNAUTHENTICATED');
    expect(String(err.message)).not.toContain('revoked-soon');
  });

  it('uses the subscriber’s token, never the service token, and only routed paths', async () => {
    u.sim.clearRequests();
    await u.backend.checkAccess('default', u.ref('d1'), u.as(ANALYTICS_READ));
    expect(u.sim.requests().map((q) => [`${q.method} ${q.path}`, q.token, q.query.namespace?.[0]])).toEqual([
      ['GET /v1/volume/csi/d1', ANALYTICS_READ, 'default'],
      ['GET /v1/acl/token/self', ANALYTICS_READ, undefined],
    ]);
  });

  it('redacts nothing and serves the configured service credential', async () => {
    const v = await u.backend.getVolume(u.ref('d1'), u.o);
    expect(u.backend.redact(v!, { allowed: true, admin: false })).toBe(v);
    await expect(u.backend.serviceCredential()).resolves.toEqual({ token: MGMT });
  });
});
