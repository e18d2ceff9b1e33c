/**
 * The Redis the replica tests share, in the topology `VG_TEST_REDIS` names: `server` (default, one
 * redis-server: ./redis.ts) or `cluster` (three primaries: ./redis-cluster.ts). The scale-out chaos
 * files take their Redis from here, so `npm run test:redis-ha` runs the same tests on a Cluster
 * (docs/scaling.md). "Redis restarted empty" is, on a Cluster, the primary serving the gateway's
 * slot killed and started again empty, rejoining with its slots.
 */
import { Cluster, Redis, type RedisOptions } from 'ioredis';
import type { RedisClient } from '../../subscriptions/redis-client';
import { startRedisServer, type RedisServerUnderTest } from './redis';
import { startRedisCluster, type ClusterNodeUnderTest, type RedisClusterUnderTest } from './redis-cluster';
import { LIVE_SLOT } from '../../server/redis';
import type { RedisConfig } from '../../server/redis-config';

export type RedisTopology = 'server' | 'cluster';

/** The topology this run tests (`VG_TEST_REDIS`). */
export const TOPOLOGY: RedisTopology = process.env.VG_TEST_REDIS === 'cluster' ? 'cluster' : 'server';

/** A running Redis of {@link TOPOLOGY}. */
export interface SharedRedisUnderTest {
  topology: RedisTopology;
  /** A replica's environment for it: `REDIS_URL` or `REDIS_CLUSTER_NODES`. */
  env: Record<string, string>;
  /** The configuration file's `redis` group for it (without `keyPrefix`). */
  config: Record<string, unknown>;
  /** The gateway's Redis configuration for it (for test/support/harness.ts's in-process gateway). */
  gatewayConfig(keyPrefix: string): RedisConfig;
  /** A client of the test's own with `options` (for a Cluster, its nodes' options); disconnect it after. */
  connect(options?: RedisOptions): RedisClient;
  /** SIGKILL of the server, or of the Cluster primary serving the gateway's slot ({live}). */
  kill(): Promise<void>;
  /**
   * The server (or that Cluster primary, which rejoins with its slots) started again empty, as after
   * a restart without persistence: Redis lost the gateway's data.
   */
  restart(): Promise<void>;
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
    /** The primary of the gateway's slot, as when it was last killed. */
    let live: ClusterNodeUnderTest | null = null;
    return {
      topology: 'cluster',
      env: { REDIS_CLUSTER_NODES: cluster.seeds },
      config: { clusterNodes: nodes },
      gatewayConfig: (keyPrefix) => ({
        clusterNodes: cluster.nodes.map((n) => ({ host: '127.0.0.1', port: n.port })),
        keyPrefix,
      }),
      connect: (o = {}) =>
        new Cluster(
          cluster.nodes.map((n) => ({ host: '127.0.0.1', port: n.port })),
          { redisOptions: o },
        ),
      kill: async () => {
        live = await cluster.ownerOf(LIVE_SLOT);
        await live.kill();
      },
      restart: async () => {
        await (live ?? (await cluster.ownerOf(LIVE_SLOT))).restart();
        live = null;
        await cluster.waitOk();
      },
      cluster,
    };
  }
  const server = await startRedisServer();
  return {
    topology: 'server',
    env: { REDIS_URL: server.url },
    config: { url: server.url },
    gatewayConfig: (keyPrefix) => ({ url: server.url, keyPrefix }),
    connect: (o = {}) => new Redis(server.url, o),
    kill: () => server.kill(),
    restart: () => server.restart(),
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
