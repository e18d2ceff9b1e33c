/**
 * Redis Cluster nodes failing under two gateway replicas (issue 30; `npm run test:redis-ha`, not in
 * `npm test`): three primaries with a replica each, `cluster-node-timeout` 1 s, the lease TTL 6 s.
 * - A new operation record written while the `{live}` slot migrates (TRYAGAIN until it ends) is
 *   stored for every replica to read.
 * - The primary serving `{live}` is killed -9 while changes flow; its replica is promoted. The
 *   replicas follow it without a restart: each subscriber gets every change once, in order, a client
 *   resuming on the other replica with its cursor from before the kill gets each change after it
 *   once, and `/readyz` names the new primary. The lease TTL outlasts the failover (about 2.5 s
 *   here), so the holder keeps its lease; bench/redis-failover.ts measures a shorter TTL too.
 * - That primary, now without a replica, is killed: `/readyz` says Redis is DOWN, naming the slot
 *   (PING, which any node answers, said UP), and queries are still answered.
 */
import { Cluster } from 'ioredis';
import type { NomadSimulator } from '../../simulators/nomad';
import { RedisOperationStore } from '../../subscriptions/operations';
import { LIVE_SLOT } from '../../server/redis';
import { disposeAll, seedVolumes, startNomad } from '../support/harness';
import { operationRecord } from '../support/operation-record';
import { stopRedisServers } from '../support/redis';
import { startRedisCluster, type RedisClusterUnderTest } from '../support/redis-cluster';
import { until } from '../support/until';
import {
  created,
  expectEachCreatedOnce,
  gql,
  nomadBackend,
  readyz,
  role,
  SERVICE_TOKEN,
  startReplica,
  subscribe,
  type Replica,
  type Subscriber,
} from '../scale/support';

describe('replicas through Redis Cluster node failures', () => {
  let cluster: RedisClusterUnderTest;
  let sim: NomadSimulator;
  let a: Replica;
  let b: Replica;
  let probe: Cluster;
  const subs: Subscriber[] = [];

  beforeAll(async () => {
    [cluster, sim] = await Promise.all([startRedisCluster({ replicas: 1, nodeTimeoutMs: 1000 }), startNomad()]);
    sim.addToken({ secret: SERVICE_TOKEN, management: true });
    seedVolumes(sim, 2);
    const redis = { REDIS_CLUSTER_NODES: cluster.seeds };
    const env = { ...nomadBackend(sim.url), LIVE_LEASE_TTL_MS: '6000', READINESS_PROBE_INTERVAL_MS: '500' };
    [a, b] = await Promise.all([startReplica('a', redis, env), startReplica('b', redis, env)]);
    probe = new Cluster(cluster.nodes.map((n) => ({ host: '127.0.0.1', port: n.port })));
    probe.on('error', () => {});
  }, 90_000);
  afterAll(async () => {
    await Promise.all(subs.map((s) => s.dispose()));
    for (const r of [a, b]) r?.child.kill('SIGKILL');
    probe?.disconnect();
    await disposeAll();
    await stopRedisServers();
  });

  it('should store an operation record written while the {live} slot migrates, for every replica to read', async () => {
    const writer = new RedisOperationStore({ client: probe, keyPrefix: 'mig:', replica: 'writer' });
    const reader = new RedisOperationStore({ client: probe, keyPrefix: 'mig:', replica: 'reader' });
    const from = await cluster.ownerOf(LIVE_SLOT);
    const to = (await cluster.primaries()).find((n) => n !== from)!;
    // Twenty keys more in the slot, at 150 ms each: the migration lasts seconds.
    for (let i = 0; i < 20; i++) await probe.set(`mig:{live}:filler:${i}`, 'x');
    const moving = cluster.moveSlot(LIVE_SLOT, to, { pauseMs: 150, first: ['scale:{live}:events'] });
    try {
      await until(
        async () => (await cluster.on(to, (r) => r.call('CLUSTER', 'COUNTKEYSINSLOT', LIVE_SLOT))) !== 0,
        'the migration to start',
        10_000,
        10,
      );
      // A new record: refused (TRYAGAIN) until the migration ends, since its key is on neither node.
      const r = operationRecord({ backend: 'east', scope: 'default' });
      expect(await writer.write(r, 0, 'writer')).toEqual({ written: true, version: 1 });
      expect(await reader.read(r.id)).toEqual({ record: r, version: 1, driver: 'writer' });
    } finally {
      await moving;
    }
  }, 60_000);

  it('should follow the promoted replica without a restart: every change once, in order, on both, and to a client resuming with its cursor', async () => {
    await until(
      async () => (await Promise.all([role(a), role(b)])).sort().join() === 'FOLLOWER,HOLDER',
      'one holder and one follower',
      45_000,
    );
    const [onA, onB] = await Promise.all([subscribe(a), subscribe(b)]);
    subs.push(onA, onB);
    const made: string[] = [];
    let n = 0;
    const create = (): void => void made.push(seedVolumes(sim, 1, 'default', `f${++n}`)[0]!);
    const flow = setInterval(create, 100);
    try {
      await until(() => created(onA).length >= 5, 'changes before the kill', 30_000);
      const owner = await cluster.ownerOf(LIVE_SLOT);
      const [replica] = await cluster.replicasOf(owner);
      expect(replica).toBeDefined();
      const before = onA.changes().at(-1)!.cursor;
      const seenBefore = created(onA).length;
      await owner.kill();
      await until(
        async () => (await cluster.ownerOf(LIVE_SLOT).catch(() => owner)) === replica,
        'the replica to be promoted',
        30_000,
      );
      const madeBy = made.length;
      await until(() => created(onA).length > madeBy && created(onB).length > madeBy, 'changes after the failover');
      clearInterval(flow);
      create();
      await expectEachCreatedOnce(made, onA, onB);
      const resumed = await subscribe(b, before);
      subs.push(resumed);
      const after = made.slice(seenBefore);
      await until(
        () => created(resumed).length >= after.length || resumed.errors.length > 0,
        'the replay on the other replica',
      );
      expect(resumed.errors).toEqual([]);
      expect(created(resumed)).toEqual(after);
      await until(
        async () => (await readyz(a)).redis?.slotPrimary === replica!.address,
        'the promoted replica in /readyz',
        15_000,
      );
    } finally {
      clearInterval(flow);
    }
  }, 120_000);

  it('should report Redis DOWN in /readyz, naming the slot, when the primary serving it dies without a replica, and keep answering queries', async () => {
    const owner = await cluster.ownerOf(LIVE_SLOT);
    expect(await cluster.replicasOf(owner)).toEqual([]);
    await owner.kill();
    for (const r of [a, b])
      await until(async () => (await readyz(r)).redis?.status === 'DOWN', `Redis DOWN in ${r.name}'s /readyz`, 30_000);
    // It stays DOWN, probe after probe.
    for (let i = 0; i < 4; i++) {
      await new Promise((resolve) => setTimeout(resolve, 500));
      const [ra, rb] = await Promise.all([readyz(a), readyz(b)]);
      expect([ra.redis.status, rb.redis.status]).toEqual(['DOWN', 'DOWN']);
      expect(ra.redis.message).toContain(`slot ${LIVE_SLOT}`);
    }
    const answer = await gql(a, '{ volumes(first: 5) { nodes { id } } }');
    expect(answer.errors).toBeUndefined();
    expect(answer.data.volumes.nodes.length).toBeGreaterThan(0);
  }, 60_000);
});
