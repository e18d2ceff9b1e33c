/**
 * The Redis the replica tests share, in the topology `VG_TEST_REDIS` names: `server` (default, one
 * redis-server: ./redis.ts) or `cluster` (three primaries: ./redis-cluster.ts). The scale-out chaos
 * files take their Redis from here, so `npm run test:redis-ha` runs the same tests on a Cluster
 * (docs/scaling.md); a test that only makes sense on one topology says so with {@link onlyOn}.
 */
import { Cluster, Redis } from 'ioredis';
import type { RedisClient } from '../../subscriptions/redis-client';
import { startRedisServer, type RedisServerUnderTest } from './redis';
import { startRedisCluster, type RedisClusterUnderTest } from './redis-cluster';

export type RedisTopology = 'server' | 'cluster';

/** The topology this run tests (`VG_TEST_REDIS`). */
export const TOPOLOGY: RedisTopology = process.env.VG_TEST_REDIS === 'cluster' ? 'cluster' : 'server';

/** `it` on `topology`, `it.skip` on the others. */
export const onlyOn = (topology: RedisTopology): jest.It => (TOPOLOGY === topology ? it : it.skip);

/** A running Redis of {@link TOPOLOGY}. */
export interface SharedRedisUnderTest {
  topology: RedisTopology;
  /** A replica's environment for it: `REDIS_URL` or `REDIS_CLUSTER_NODES`. */
  env: Record<string, string>;
  /** The configuration file's `redis` group for it (without `keyPrefix`). */
  config: Record<string, unknown>;
  /** A client of the test's own (disconnect it after). */
  connect(): RedisClient;
  /** The single server (`server` only). */
  server?: RedisServerUnderTest;
  /** The Cluster (`cluster` only). */
  cluster?: RedisClusterUnderTest;
}

/** Starts a Redis of {@link TOPOLOGY}; `stopRedisServers()` stops it. */
export async function startSharedRedis(): Promise<SharedRedisUnderTest> {
  if (TOPOLOGY === 'cluster') {
    const cluster = await startRedisCluster();
    const nodes = cluster.nodes.map((n) => n.address);
    return {
      topology: 'cluster',
      env: { REDIS_CLUSTER_NODES: cluster.seeds },
      config: { clusterNodes: nodes },
      connect: () => new Cluster(cluster.nodes.map((n) => ({ host: '127.0.0.1', port: n.port }))),
      cluster,
    };
  }
  const server = await startRedisServer();
  return {
    topology: 'server',
    env: { REDIS_URL: server.url },
    config: { url: server.url },
    connect: () => new Redis(server.url),
    server,
  };
}

/**
 * `KEYS pattern` over every primary: on a Cluster, ioredis sends KEYS to one node of its choice,
 * which sees only its own slots.
 */
export async function keysOf(client: RedisClient, pattern: string): Promise<string[]> {
  if (client instanceof Cluster) return (await Promise.all(client.nodes('master').map((n) => n.keys(pattern)))).flat();
  return client.keys(pattern);
}
