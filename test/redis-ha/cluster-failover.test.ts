/**
 * A Redis Cluster failover under two gateway replicas (issue 30; `npm run test:redis-ha`, not in
 * `npm test`): three primaries with a replica each, `cluster-node-timeout` 1 s. While changes
 * flow, the primary serving the gateway's slot (`{live}`) is killed -9; its replica is promoted.
 * The replicas follow it without a restart: events resume, each subscriber gets every change once,
 * in order, a client resuming on the other replica with its cursor from before the kill gets each
 * change after it once, and `/readyz` names the new primary. The lease TTL (6 s) outlasts the
 * failover (about 2.5 s here), so the holder keeps its lease: bench/redis-failover.ts measures a
 * TTL shorter than the failover too.
 */
import type { NomadSimulator } from '../../simulators/nomad';
import { LIVE_SLOT } from '../../server/redis';
import { disposeAll, seedVolumes, startNomad } from '../support/harness';
import { stopRedisServers } from '../support/redis';
import { startRedisCluster, type RedisClusterUnderTest } from '../support/redis-cluster';
import { until } from '../support/until';
import {
  created,
  expectEachCreatedOnce,
  nomadBackend,
  readyz,
  role,
  SERVICE_TOKEN,
  startReplica,
  subscribe,
  type Replica,
  type Subscriber,
} from '../scale/support';

describe('replicas through a Redis Cluster failover', () => {
  let cluster: RedisClusterUnderTest;
  let sim: NomadSimulator;
  let a: Replica;
  let b: Replica;
  const subs: Subscriber[] = [];

  beforeAll(async () => {
    [cluster, sim] = await Promise.all([startRedisCluster({ replicas: 1, nodeTimeoutMs: 1000 }), startNomad()]);
    sim.addToken({ secret: SERVICE_TOKEN, management: true });
    seedVolumes(sim, 2);
    const redis = { REDIS_CLUSTER_NODES: cluster.seeds };
    const env = { ...nomadBackend(sim.url), LIVE_LEASE_TTL_MS: '6000', READINESS_PROBE_INTERVAL_MS: '500' };
    [a, b] = await Promise.all([startReplica('a', redis, env), startReplica('b', redis, env)]);
  }, 90_000);
  afterAll(async () => {
    await Promise.all(subs.map((s) => s.dispose()));
    for (const r of [a, b]) r?.child.kill('SIGKILL');
    await disposeAll();
    await stopRedisServers();
  });

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
});
