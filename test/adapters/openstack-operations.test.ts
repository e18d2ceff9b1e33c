/**
 * The operation tracker driving the real OpenStack backend against the real simulator: records
 * hold the completion rule (with its seen facts) instead of a closure, the poller hands it to the
 * backend's `checkChange` with the caller's credential, and a real redis-server stores the
 * records as JSON that another store instance reads back whole.
 */
import { Redis } from 'ioredis';
import type { VolumeRef } from '../../adapters/contract/model';
import { OperationTracker, RedisOperationStore } from '../../subscriptions/operations';
import type { OperationRecord } from '../../adapters/contract/model';
import { startRedisServer, stopRedisServers, type RedisServerUnderTest } from '../support/redis';
import { startAdapterCloud, type AdapterCloud } from './openstack-helpers';
import { isTerminal, settle } from '../support/until';

let c: AdapterCloud;
let tracker: OperationTracker;
const ref = (nativeId: string): VolumeRef => ({ backend: 'os', namespace: c.p.demo, nativeId });
const changes = (id: string) => (id === 'os' ? c.backend.trackedChanges : undefined);

/** Reads operation `id` until it is terminal (at most `ms`); the record as last read. */
const settleOp = (t: OperationTracker, id: string, ms = 4000): Promise<OperationRecord> =>
  settle(async () => (await t.get(id))!, isTerminal, ms, 10);

beforeEach(async () => {
  c = await startAdapterCloud();
});
afterEach(async () => {
  await tracker.close();
  await c.close();
});

describe('operation tracker with the OpenStack backend', () => {
  beforeEach(() => {
    tracker = new OperationTracker({ changes, pollMs: 20, maxPollMs: 40 });
  });

  it('should end a detach that Nova failed in compute as FAILED long before its deadline, keeping the rule in the record', async () => {
    const server = c.sim.seedServer({ project: 'demo', name: 's' });
    const vol = c.sim.seedVolume({ project: 'demo', name: 'v' });
    c.sim.attachNow(server, vol);
    c.sim.failNextDetach(vol);
    const accepted = await c.backend.detachVolume(ref(vol), { kind: 'server', serverId: server }, c.as.demo);
    const started = await tracker.start({
      kind: 'DETACH_VOLUME',
      backend: 'os',
      scope: c.p.demo,
      targetId: vol,
      credential: c.as.demo.credential,
      pending: accepted.pending,
    });
    expect(started.deadline - started.createdAt).toBe(5000);
    const done = await settleOp(tracker, started.id);
    expect(done).toMatchObject({
      state: 'FAILED',
      backendStatus: 'available',
      failureReason: expect.stringMatching(
        /^Nova failed the detach at compute_detach_volume \(request req-[0-9a-f-]{36}\); Cinder shows/,
      ),
    });
    expect(done.updatedAt - done.createdAt).toBeLessThan(1500);
    expect(done.rule).toMatchObject({
      name: 'serverDetach',
      params: { volumeId: vol, serverId: server, novaRequestId: accepted.pending!.rule.params.novaRequestId },
    });
    expect(JSON.stringify(done)).not.toContain(c.t.demo);
  });

  it('should drive a snapshot create and delete to SUCCEEDED through checkChange', async () => {
    const vol = c.sim.seedVolume({ project: 'demo', name: 'v' });
    const created = await c.backend.createSnapshot(
      { volume: ref(vol), name: 'snap', description: 'nightly' },
      c.as.demo,
    );
    expect(created.result).toMatchObject({
      __typename: 'VolumeSnapshot',
      backend: 'os',
      scope: c.p.demo,
      name: 'snap',
      ready: false,
      backendStatus: 'creating',
      sourceVolume: ref(vol),
      sizeBytes: 1024 ** 3,
    });
    const a = await tracker.start({
      kind: 'CREATE_SNAPSHOT',
      backend: 'os',
      scope: c.p.demo,
      targetId: created.result.nativeId,
      credential: c.as.demo.credential,
      pending: created.pending,
    });
    expect(await settleOp(tracker, a.id)).toMatchObject({ state: 'SUCCEEDED', backendStatus: 'available' });
    const snap = { backend: 'os', scope: c.p.demo, nativeId: created.result.nativeId };
    expect(await c.backend.getSnapshot(snap, c.as.demo)).toMatchObject({ ready: true, description: 'nightly' });
    expect(
      (await c.backend.listSnapshots({ volume: ref(vol), limit: 10, token: null }, c.as.demo)).items.map(
        (s) => s.nativeId,
      ),
    ).toEqual([snap.nativeId]);

    const deleted = await c.backend.deleteSnapshot(snap, {}, c.as.demo);
    const b = await tracker.start({
      kind: 'DELETE_SNAPSHOT',
      backend: 'os',
      scope: c.p.demo,
      targetId: snap.nativeId,
      credential: c.as.demo.credential,
      pending: deleted.pending,
    });
    expect(await settleOp(tracker, b.id)).toMatchObject({ state: 'SUCCEEDED', backendStatus: 'deleted' });
    expect(await c.backend.getSnapshot(snap, c.as.demo)).toBeNull();
  });

  it("should fail the operation when the caller's token stops working, with that error", async () => {
    c.sim.setDelays({ createMs: 60_000 });
    const token = c.sim.issueToken({ user: 'demo', project: 'demo' });
    const accepted = await c.backend.createVolume(
      { namespace: 'default', name: 'slow', capacityMinBytes: 1024 ** 3 },
      { credential: { token } },
    );
    c.sim.expireToken(token);
    const r = await tracker.start({
      kind: 'CREATE_VOLUME',
      backend: 'os',
      scope: c.p.demo,
      targetId: accepted.result.nativeId,
      credential: { token },
      pending: accepted.pending,
    });
    expect(await settleOp(tracker, r.id)).toMatchObject({
      state: 'FAILED',
      failureReason: expect.stringMatching(/invalid or expired/),
    });
  });
});

describe('operation records in Redis', () => {
  let redis: RedisServerUnderTest;
  let client: Redis;
  beforeAll(async () => {
    redis = await startRedisServer();
  });
  afterAll(() => stopRedisServers());
  beforeEach(() => {
    client = new Redis(redis.url, { lazyConnect: false, maxRetriesPerRequest: 1 });
    tracker = new OperationTracker({
      changes,
      pollMs: 20,
      maxPollMs: 40,
      store: new RedisOperationStore({ client, keyPrefix: 'os-adapter-test:' }),
    });
  });
  afterEach(() => client.quit());

  it("should store the rule and its seen facts as JSON that another replica's store reads back whole", async () => {
    const server = c.sim.seedServer({ project: 'demo', name: 's' });
    const vol = c.sim.seedVolume({ project: 'demo', name: 'v' });
    c.sim.setDelays({ attachMs: 300 }); // long enough for the first poll to see it under way
    const accepted = await c.backend.attachVolume(ref(vol), { kind: 'server', serverId: server }, c.as.demo);
    const r = await tracker.start({
      kind: 'ATTACH_VOLUME',
      backend: 'os',
      scope: c.p.demo,
      targetId: vol,
      credential: c.as.demo.credential,
      pending: accepted.pending,
    });
    const done = await settleOp(tracker, r.id);
    expect(done).toMatchObject({
      state: 'SUCCEEDED',
      backendStatus: 'in-use',
      rule: { name: 'serverAttach', seen: { started: true } },
    });

    const raw = await client.hget(`os-adapter-test:{live}:operation:${r.id}`, 'j');
    expect(JSON.parse(raw!)).toEqual(done);
    expect(raw).not.toContain(c.t.demo);
    const other = new Redis(redis.url);
    try {
      const replica = new RedisOperationStore({ client: other, keyPrefix: 'os-adapter-test:' });
      const read = (await replica.get(r.id))!;
      expect(read.rule).toEqual(done.rule);
      // The stored rule is enough to check the change again, from any process with a credential.
      expect((await c.backend.checkChange(read.rule!, c.as.demo)).progress).toEqual({
        state: 'SUCCEEDED',
        backendStatus: 'in-use',
      });
    } finally {
      await other.quit();
    }
  });
});
