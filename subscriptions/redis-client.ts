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

/**
 * Whether a Cluster refused `err`'s command without running it: its slot is being migrated
 * (`TRYAGAIN`, or `ASK`/`MOVED` redirections ioredis followed until its `maxRedirections`) or has
 * no primary for now (`CLUSTERDOWN`, during a failover). Never true of an error after which the
 * command may have run (a timeout, a closed connection).
 */
export function refusedByCluster(err: unknown): boolean {
  const m = err instanceof Error ? err.message : '';
  return /^(?:Too many Cluster redirections\. Last error: (?:ReplyError: )?)?(?:TRYAGAIN|MOVED|ASK|CLUSTERDOWN)\b/.test(
    m,
  );
}

/**
 * Whether ioredis gave up on `err`'s command because the primary of its slot is gone and not
 * replaced yet: it spent its redirections on closed connections to it (a Cluster failover takes
 * the node timeout and an election, seconds; ioredis's redirections last about 1.6 s). Every retry
 * after the first found the connection closed and was not sent; the attempt in flight when the
 * node died may have run (ioredis itself sends such a command again: at least once).
 */
export function slotPrimaryLost(err: unknown): boolean {
  const m = err instanceof Error ? err.message : '';
  return m === 'Too many Cluster redirections. Last error: Error: Connection is closed.';
}

/** Options of {@link whileSlotMoves}. */
export interface SlotMoveWait {
  /** Pause between attempts, in ms. @default 100 */
  everyMs?: number;
  /**
   * Longest wait, in ms: then the last refusal is thrown. The default is the default lease TTL: a
   * fenced write refused that long would find its lease gone anyway. @default 10000
   */
  maxMs?: number;
}

/**
 * Runs `f` again while its Cluster slot moves: migrated to another primary ({@link refusedByCluster}:
 * a script or transaction over several keys of the slot is refused with `TRYAGAIN` until the
 * migration ends, which for the gateway's one slot can take seconds), or failed over to a replica
 * ({@link slotPrimaryLost}); both last far longer than ioredis's own redirections. A refused command
 * did not run; after a lost primary, see {@link slotPrimaryLost}.
 */
export async function whileSlotMoves<T>(f: () => Promise<T>, o: SlotMoveWait = {}): Promise<T> {
  const end = Date.now() + (o.maxMs ?? 10_000);
  for (;;) {
    try {
      return await f();
    } catch (err) {
      if (!(refusedByCluster(err) || slotPrimaryLost(err)) || Date.now() >= end) throw err;
      await new Promise((resolve) => setTimeout(resolve, o.everyMs ?? 100));
    }
  }
}
