/**
 * The Redis connection every shared store takes: a single server (a Sentinel primary is one) or a
 * Cluster. Both speak the same commands through ioredis; every key a store uses together carries
 * one hash tag (docs/scaling.md, "Slot plan"), so multi-key scripts and transactions work on both.
 */
import type { Cluster, Redis } from 'ioredis';

export type RedisClient = Redis | Cluster;

/** What a connection of its own changes from the shared client's options. */
export interface OwnConnectionOptions {
  /** Suffix of the connection's name in `CLIENT LIST` (`<client's name>-<suffix>`). */
  name: string;
  commandTimeout: number;
  /** @default the shared client's */
  maxRetriesPerRequest?: number | null;
  /** @default the shared client's */
  enableOfflineQueue?: boolean;
}

const isCluster = (c: RedisClient): c is Cluster => 'nodes' in c && typeof c.nodes === 'function';

/**
 * A connection of its own, with the shared client's address and credentials: a blocking read
 * (`XREAD BLOCK`) would hold the shared connection and be cut by its command deadline. On a
 * Cluster, a new Cluster client: ioredis keeps one connection per node and client, so the blocking
 * read holds only the new client's connection to the node that owns the stream's slot.
 */
export function ownConnection(client: RedisClient, o: OwnConnectionOptions): RedisClient {
  const overrides = {
    commandTimeout: o.commandTimeout,
    ...(o.maxRetriesPerRequest !== undefined ? { maxRetriesPerRequest: o.maxRetriesPerRequest } : {}),
    ...(o.enableOfflineQueue !== undefined ? { enableOfflineQueue: o.enableOfflineQueue } : {}),
  };
  if (isCluster(client)) {
    const base = client.options.redisOptions ?? {};
    return client.duplicate(undefined, {
      ...(o.enableOfflineQueue !== undefined ? { enableOfflineQueue: o.enableOfflineQueue } : {}),
      redisOptions: { ...base, ...overrides, connectionName: `${base.connectionName ?? 'volume-gateway'}-${o.name}` },
    });
  }
  return client.duplicate({
    ...overrides,
    connectionName: `${client.options.connectionName ?? 'volume-gateway'}-${o.name}`,
  });
}
