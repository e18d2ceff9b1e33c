/**
 * Replicas on a real Redis Cluster (issue 30): three primaries (test/support/redis-cluster.ts), two
 * gateway replicas given `REDIS_CLUSTER_NODES`, one Nomad simulator. Every key the gateway writes
 * is in the `{live}` slot. While changes flow, that slot is migrated to another primary key by key
 * (as `redis-cli --cluster reshard` does, slowed so the slot stays in migration for seconds, the
 * stream moved first so the append script's keys are split over two nodes): the replicas meet
 * ASK, TRYAGAIN and then MOVED, and each subscriber gets every change once, in order. Then the
 * primary serving the slot is killed (no replica): `/readyz` says Redis is DOWN, queries go on.
 *
 * The rest of the chaos set runs on a Cluster with `npm run test:redis-ha` (test/scale/replicas.test.ts
 * and test/server/operations-replicas.test.ts with `VG_TEST_REDIS=cluster`, and test/redis-ha/).
 */
import { Cluster } from 'ioredis';
import type { NomadSimulator } from '../../simulators/nomad';
import { RedisOperationStore } from '../../subscriptions/operations';
import { LIVE_SLOT } from '../../server/redis';
import { disposeAll, seedVolumes, startNomad } from '../support/harness';
import { operationRecord } from '../support/operation-record';
import { stopRedisServers } from '../support/redis';
import { startRedisCluster, type ClusterNodeUnderTest, type RedisClusterUnderTest } from '../support/redis-cluster';
import { until } from '../support/until';
import {
  created,
  expectEachCreatedOnce,
  gql,
  nativeOf,
  nomadBackend,
  readyz,
  role,
  SERVICE_TOKEN,
  startReplica,
  subscribe,
  type Replica,
  type Subscriber,
} from './support';

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
  /** A primary other than the one serving the gateway's slot now. */
  const another = async (): Promise<ClusterNodeUnderTest> => {
    const from = await cluster.ownerOf(LIVE_SLOT);
    return cluster.nodes.find((n) => n !== from)!;
  };

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
    const to = await another();
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
    const logged = (await probe.xrange('scale:{live}:events', '-', '+'))
      .map(([, f]) => JSON.parse(f[f.indexOf('e') + 1]!) as { type: string; volumeId: string })
      .filter((e) => e.type === 'CREATED' && made.includes(nativeOf(e.volumeId)))
      .map((e) => nativeOf(e.volumeId));
    expect(logged).toEqual(made);
    // /readyz follows the slot to its new primary.
    await until(async () => (await readyz(a)).redis?.slotPrimary === to.address, 'the new primary in /readyz', 15_000);
    expect((await readyz(b)).redis).toMatchObject({ status: 'UP', topology: 'cluster', primaries: 3 });
  }, 90_000);

  it('should store an operation record written while the {live} slot migrates, for every replica to read', async () => {
    const writer = new RedisOperationStore({ client: probe, keyPrefix: 'mig:', replica: 'writer' });
    const reader = new RedisOperationStore({ client: probe, keyPrefix: 'mig:', replica: 'reader' });
    const to = await another();
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

  it('should report Redis DOWN in /readyz, naming the slot, when the primary serving it dies, and keep answering queries', async () => {
    const owner = await cluster.ownerOf(LIVE_SLOT);
    await owner.kill();
    for (const r of [a, b])
      await until(async () => (await readyz(r)).redis?.status === 'DOWN', `Redis DOWN in ${r.name}'s /readyz`, 30_000);
    // It stays DOWN, probe after probe (PING, which any node answers, said UP).
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
