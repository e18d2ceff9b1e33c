/**
 * The gateway's Redis connection (scale-out, docs/scaling.md): one ioredis client per process,
 * its readiness check and its shutdown. Redis trouble is logged, reported by `/readyz`, and never
 * crashes the process: ioredis reports connection failures as 'error' events, which are handled
 * here, and reconnects by itself.
 *
 * The URL may carry a password: it is never logged; {@link redactRedisUrl} is what logs show.
 */
import { readFileSync } from 'node:fs';
import { Cluster, Redis, type RedisOptions } from 'ioredis';
import type { RedisClient } from '../subscriptions/redis-client';
import type { RedisConfig, RedisNode } from './redis-config';
import type { Logger } from './logger';

/** What `/readyz` reports about Redis. */
export interface RedisHealth {
  /** `UP` when PING answered; `DOWN` otherwise; `NOT_CONFIGURED` without `REDIS_URL` (never fails readiness). */
  status: 'UP' | 'DOWN' | 'NOT_CONFIGURED';
  /** Round trip of the PING in ms; null when it did not answer or Redis is not configured. */
  latencyMs: number | null;
  /**
   * The server's replication role (`ROLE`): `master`, or `slave` for a read-only replica the live
   * path cannot write to; `cluster` on a Cluster. Absent when it did not answer or Redis is not configured.
   */
  role?: string;
  /** The topology configured: `server` (`REDIS_URL`), `sentinel` or `cluster`. Absent when not configured. */
  topology?: 'server' | 'sentinel' | 'cluster';
  /** On a Cluster: the primaries the client knows. */
  primaries?: number;
  /** On a Cluster: the primary serving the gateway's slot ({@link LIVE_SLOT}), `host:port`, as the client last learnt it. */
  slotPrimary?: string;
  message: string;
}

/** A Redis connection owned by one gateway. */
export interface GatewayRedis {
  readonly client: RedisClient;
  readonly keyPrefix: string;
  /** PING with a deadline; never rejects. */
  health(): Promise<RedisHealth>;
  /** QUIT (or drop the connection if Redis is gone); never rejects. */
  close(): Promise<void>;
}

/**
 * The Cluster slot of every key the gateway writes: `CLUSTER KEYSLOT` of the `{live}` hash tag
 * (the key prefix cannot carry braces, so it never changes the slot).
 */
export const LIVE_SLOT = 3558;

/** Deadline of one Redis command, PING included. */
const COMMAND_TIMEOUT_MS = 2000;

/** The URL for logs: `redis://***@host:port/db`, never the password (nor the user name). */
export function redactRedisUrl(url: string): string {
  try {
    const u = new URL(url);
    const auth = u.username || u.password ? '***@' : '';
    return `${u.protocol}//${auth}${u.host}${u.pathname}`;
  } catch {
    return '(invalid Redis URL)';
  }
}

/**
 * An error's message for logs, with anything URL-like that could carry credentials removed. Never
 * log an ioredis error object itself: a failed AUTH carries the password in `command.args`.
 */
export function redisErrorText(err: unknown): string {
  const text = err instanceof Error ? err.message : String(err);
  return text.replace(/rediss?:\/\/\S+/g, (m) => redactRedisUrl(m));
}

const nodesText = (nodes: readonly RedisNode[]): string =>
  nodes.map((n) => (n.host.includes(':') ? `[${n.host}]:${n.port}` : `${n.host}:${n.port}`)).join(',');

/** Where the gateway's Redis is, for logs: never a password. */
export function describeRedis(config: RedisConfig): string {
  if (config.sentinel) return `sentinel://${nodesText(config.sentinel.sentinels)}/${config.sentinel.masterName}`;
  if (config.clusterNodes) return `cluster://${nodesText(config.clusterNodes)}`;
  return redactRedisUrl(config.url ?? '');
}

/** The client for the configured topology (not connected yet: ioredis connects in the background). */
function clientOf(config: RedisConfig): RedisClient {
  const base: RedisOptions = {
    // Fail commands instead of queueing them for long while Redis is away; the store falls back.
    maxRetriesPerRequest: 1,
    commandTimeout: COMMAND_TIMEOUT_MS,
    connectTimeout: 5000,
    retryStrategy: (times) => Math.min(times * 200, 2000),
    // Connection names show up in CLIENT LIST; the process id tells replicas on one host apart.
    connectionName: `volume-gateway-${process.pid}`,
  };
  const ca = config.tlsCaFile ? readFileSync(config.tlsCaFile) : undefined;
  const tls = config.tls ? { ...(ca ? { ca } : {}) } : undefined;
  const auth = {
    ...(config.username !== undefined ? { username: config.username } : {}),
    ...(config.password !== undefined ? { password: config.password } : {}),
  };
  if (config.sentinel) {
    const s = config.sentinel;
    return new Redis({
      ...base,
      ...auth,
      ...(tls ? { tls } : {}),
      ...(config.db !== undefined ? { db: config.db } : {}),
      sentinels: s.sentinels,
      name: s.masterName,
      ...(s.username !== undefined ? { sentinelUsername: s.username } : {}),
      ...(s.password !== undefined ? { sentinelPassword: s.password } : {}),
      ...(s.tls ? { enableTLSForSentinelMode: true, sentinelTLS: { ...(ca ? { ca } : {}) } } : {}),
      sentinelRetryStrategy: (times) => Math.min(times * 200, 2000),
      // A primary that was demoted (it came back as a replica) refuses writes: ask the sentinels
      // again. (Not ioredis's failoverDetector: its disconnect during a connect attempt ends the
      // client for good.)
      reconnectOnError: (err) => err.message.startsWith('READONLY'),
    });
  }
  if (config.clusterNodes) {
    return new Cluster(config.clusterNodes, {
      redisOptions: { ...base, ...auth, ...(tls ? { tls } : {}) },
      clusterRetryStrategy: (times) => Math.min(times * 200, 2000),
      // A command during a resharding or failover waits for the new slot map instead of failing.
      retryDelayOnClusterDown: 200,
      retryDelayOnTryAgain: 100,
      slotsRefreshTimeout: 2000,
    });
  }
  const rediss = config.url?.startsWith('rediss:') && ca ? { tls: { ca } } : {};
  return new Redis(config.url!, { ...base, ...rediss });
}

/** Connects (in the background: the gateway starts even while Redis is down) and logs state changes once each. */
export function connectRedis(config: RedisConfig, logger: Logger): GatewayRedis {
  const where = describeRedis(config);
  const topology = config.sentinel ? 'sentinel' : config.clusterNodes ? 'cluster' : 'server';
  const client = clientOf(config);
  let lastError: string | null = null;
  let down = false;
  client.on('error', (err: unknown) => {
    const message = redisErrorText(err);
    // Reconnect attempts repeat the same error; log it when it changes.
    if (message !== lastError) logger.warn({ redis: where, err: message }, 'redis error');
    lastError = message;
    down = true;
  });
  if (client instanceof Cluster) {
    // A node's connection errors (one node down) are not the Cluster's 'error': logged here, each
    // message once per node until a connection to that node is ready again (ioredis reconnects to a
    // dead node after every slot refresh, alternating refused and closed).
    const nodeErrors = new Map<string, Set<string>>();
    client.on('node error', (err: unknown, node: string) => {
      const message = redisErrorText(err);
      const seen = nodeErrors.get(node) ?? new Set<string>();
      if (!seen.has(message)) logger.warn({ redis: where, node, err: message }, 'redis node error');
      nodeErrors.set(node, seen.add(message));
    });
    client.on('+node', (r: Redis) =>
      r.once('ready', () => {
        const node = `${r.options.host}:${r.options.port}`;
        if (nodeErrors.delete(node)) logger.info({ redis: where, node }, 'redis node connection restored');
      }),
    );
  }
  client.on('ready', () => {
    if (down) logger.info({ redis: where }, 'redis connection restored');
    else logger.info({ redis: where }, 'redis connected');
    down = false;
    lastError = null;
  });
  let closing = false;
  return {
    client,
    keyPrefix: config.keyPrefix,
    async health() {
      // While reconnecting (or closed) a PING would only wait in the offline queue: DOWN at once.
      // While first connecting it waits (at most the command deadline) for the answer.
      if (client.status !== 'ready' && client.status !== 'connecting' && client.status !== 'connect') {
        return {
          status: 'DOWN',
          latencyMs: null,
          message: `not connected (${client.status})${lastError ? `: ${lastError}` : ''}`,
        };
      }
      if (client instanceof Cluster) return clusterHealth(client, config.keyPrefix);
      const started = process.hrtime.bigint();
      try {
        await client.ping();
        const latencyMs = Math.round(Number(process.hrtime.bigint() - started) / 1e4) / 100;
        const role = await client.call('ROLE').then(
          (r) => (Array.isArray(r) && typeof r[0] === 'string' ? r[0] : undefined),
          () => undefined,
        );
        return { status: 'UP', latencyMs, ...(role ? { role } : {}), topology, message: `PING answered by ${where}` };
      } catch (err) {
        // While first connecting a PING only times out: the connection's own error says why.
        const why = lastError && lastError !== redisErrorText(err) ? ` (connection: ${lastError})` : '';
        return { status: 'DOWN', latencyMs: null, message: `PING failed: ${redisErrorText(err)}${why}` };
      }
    },
    async close() {
      if (closing) return;
      closing = true;
      try {
        if (client.status === 'ready') await client.quit();
        else client.disconnect();
      } catch {
        client.disconnect();
      }
      logger.info({ redis: where }, 'redis connection closed');
    },
  };
}

/**
 * A Cluster's health is its {@link LIVE_SLOT}'s: PING goes to any node and answers even while the
 * Cluster refuses every key (a slot without a primary, `cluster_state:fail`), and every key the
 * gateway keeps is in that one slot. So the probe is a keyed read there (`EXISTS`), answered by
 * the primary serving it, after whatever MOVED, ASK or failover ioredis follows within the
 * command deadline.
 */
async function clusterHealth(client: Cluster, keyPrefix: string): Promise<RedisHealth> {
  const started = process.hrtime.bigint();
  const primaries = client.nodes('master').length;
  try {
    await client.exists(`${keyPrefix}{live}`);
    const latencyMs = Math.round(Number(process.hrtime.bigint() - started) / 1e4) / 100;
    const slotPrimary = client.slots[LIVE_SLOT]?.[0];
    return {
      status: 'UP',
      latencyMs,
      role: 'cluster',
      topology: 'cluster',
      primaries,
      ...(slotPrimary ? { slotPrimary } : {}),
      message: `slot ${LIVE_SLOT} ({live}) answered by its primary${slotPrimary ? ` ${slotPrimary}` : ''}`,
    };
  } catch (err) {
    return {
      status: 'DOWN',
      latencyMs: null,
      topology: 'cluster',
      primaries,
      message: `slot ${LIVE_SLOT} ({live}) did not answer: ${redisErrorText(err)}`,
    };
  }
}
