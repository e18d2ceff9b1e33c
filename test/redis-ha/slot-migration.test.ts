/**
 * In `npm run test:redis-ha`, not `npm test` (a Cluster of three primaries and two replicas take
 * longer than the suite can spare). Replicas on a real Redis Cluster (issue 30): three primaries (test/support/redis-cluster.ts), two
 * gateway replicas given `REDIS_CLUSTER_NODES`, one Nomad simulator. Every key the gateway writes
 * is in the `{live}` slot. While changes flow, that slot is migrated to another primary key by key
 * (as `redis-cli --cluster reshard` does, slowed so the slot stays in migration for seconds, the
 * stream moved first so the append script's keys are split over two nodes): the replicas meet
 * ASK, TRYAGAIN and then MOVED, and each subscriber gets every change once, in order.
 *
 * The rest of the Cluster chaos runs with `npm run test:redis-ha`: the replica chaos files with
 * `VG_TEST_REDIS=cluster`, and test/redis-ha/ (a failover, a node down, a write during a migration).
 */
import { Cluster } from 'ioredis';
import type { NomadSimulator } from '../../simulators/nomad';
import { LIVE_SLOT } from '../../server/redis';
import { disposeAll, seedVolumes, startNomad } from '../support/harness';
import { stopRedisServers } from '../support/redis';
import { startRedisCluster, type RedisClusterUnderTest } from '../support/redis-cluster';
import { until } from '../support/until';
import {
  created,
  expectEachCreatedOnce,
  loggedCreates,
  nomadBackend,
  readyz,
  role,
  SERVICE_TOKEN,
  startReplica,
  subscribe,
  type Replica,
  type Subscriber,
} from '../scale/support';

/** Cluster redirections the nodes answered, from `INFO errorstats`. */
async function redirections(c: RedisClusterUnderTest): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const n of c.nodes) {
    const info = await c.on(n, (r) => r.info('errorstats'));
    for (const [, code, count] of info.matchAll(/errorstat_(\w+):count=(\d+)/g))
      out[code!] = (out[code!] ?? 0) + Number(count);
  }
  return out;
}

describe('replicas on a Redis Cluster', () => {
  let cluster: RedisClusterUnderTest;
  let sim: NomadSimulator;
  let a: Replica;
  let b: Replica;
  let probe: Cluster;
  const subs: Subscriber[] = [];

  beforeAll(async () => {
    [cluster, sim] = await Promise.all([startRedisCluster(), startNomad()]);
    sim.addToken({ secret: SERVICE_TOKEN, management: true });
    seedVolumes(sim, 2);
    const redis = { REDIS_CLUSTER_NODES: cluster.seeds };
    const env = { ...nomadBackend(sim.url), READINESS_PROBE_INTERVAL_MS: '500' };
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

  it('should deliver every change once, in order, on both replicas while the {live} slot migrates to another primary', async () => {
    expect(await cluster.slotOf('scale:{live}:events')).toBe(LIVE_SLOT);
    await until(
      async () => (await Promise.all([role(a), role(b)])).sort().join() === 'FOLLOWER,HOLDER',
      'one holder and one follower',
      45_000,
    );
    const [onA, onB] = await Promise.all([subscribe(a), subscribe(b)]);
    subs.push(onA, onB);
    const from = await cluster.ownerOf(LIVE_SLOT);
    const to = cluster.nodes.find((n) => n !== from)!;
    const before = await redirections(cluster);

    const made: string[] = [];
    let n = 0;
    const create = (): void => void made.push(seedVolumes(sim, 1, 'default', `m${++n}`)[0]!);
    create();
    await until(() => created(onA).length >= 1 && created(onB).length >= 1, 'a first change on both', 30_000);
    const flow = setInterval(create, 100);
    const startedAt = made.length;
    try {
      // The stream first, then 250 ms per key: for seconds the append script's keys are split
      // over both nodes (TRYAGAIN, longer than ioredis's own redirections last) while changes flow.
      await cluster.moveSlot(LIVE_SLOT, to, { pauseMs: 250, first: ['scale:{live}:events'] });
    } finally {
      clearInterval(flow);
    }
    expect(made.length - startedAt).toBeGreaterThanOrEqual(10);
    create();
    await expectEachCreatedOnce(made, onA, onB);
    // Redirected during the migration: ASK (a key already moved) and TRYAGAIN (keys on both sides).
    const after = await redirections(cluster);
    const met = (code: string): number => (after[code] ?? 0) - (before[code] ?? 0);
    expect(met('ASK')).toBeGreaterThan(0);
    expect(met('TRYAGAIN')).toBeGreaterThan(0);
    // The log holds each change once, on the new primary.
    expect(await loggedCreates(probe, made)).toEqual(made);
    // /readyz follows the slot to its new primary.
    await until(async () => (await readyz(a)).redis?.slotPrimary === to.address, 'the new primary in /readyz', 15_000);
    expect((await readyz(b)).redis).toMatchObject({ status: 'UP', topology: 'cluster', primaries: 3 });
  }, 90_000);
});
