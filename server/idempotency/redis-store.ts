/**
 * Idempotency keys in Redis, so a retry that reaches another replica behind the load balancer
 * finds the first request's claim or result (docs/scaling.md).
 *
 * One key per scoped key, `<keyPrefix>idempotency:<hash>` (the operation store's prefix), holding
 * the {@link IdempotencyEntry} as JSON: the input's fingerprint, the state and, once done, the
 * result (ids, never inputs or credentials).
 * - `claim`: `SET key <pending entry> NX PX ttl`, else `GET key`. One command decides the owner, so
 *   of two replicas claiming the same key at once exactly one runs the create.
 * - `complete`: `SET key <done entry> XX PX ttl` (a claim that expired meanwhile is not re-created).
 * - `release`: `DEL key`.
 *
 * Redis trouble: unlike operation records there is no safe local fallback, since keys remembered
 * by one replica only would let a retry on another replica create a second time. So a claim that
 * cannot reach Redis fails the creating mutation with `BACKEND_UNAVAILABLE` (retryable) before any
 * backend call: the client retries later with the same key, and nothing is created twice. Once the
 * backend has accepted the create, Redis trouble no longer fails the mutation: `complete` and
 * `release` never reject, they report to `onError`, and the pending entry stays until its claim
 * expires (a retry meanwhile gets `CONFLICT`, retryable). A Redis that lost its data (restarted
 * without persistence) forgets its keys: a retry after that runs again.
 *
 * The client is the caller's: this store never connects or closes it.
 */
import type { Redis } from 'ioredis';
import { BackendUnavailableError } from '../../adapters/errors';
import { DEFAULT_REDIS_KEY_PREFIX } from '../../subscriptions/operations';
import type { IdempotencyEntry, IdempotencyStore } from './store';

/** Options of {@link RedisIdempotencyStore}. */
export interface RedisIdempotencyStoreOptions {
  /** A connected (or connecting) ioredis client; the caller owns its lifecycle. */
  client: Redis;
  /** Prefix of every key this store writes; replicas sharing keys must use the same one. @default 'vg:' */
  keyPrefix?: string;
  /** Called when a Redis command fails (the server logs it). Must not throw. @default none */
  onError?: (op: 'claim' | 'complete' | 'release', err: unknown) => void;
}

/** How often a claim retries when the key it lost to vanished before it could be read. */
const CLAIM_ATTEMPTS = 3;

export class RedisIdempotencyStore implements IdempotencyStore {
  readonly #client: Redis;
  readonly #prefix: string;
  readonly #onError: NonNullable<RedisIdempotencyStoreOptions['onError']>;

  constructor(o: RedisIdempotencyStoreOptions) {
    this.#client = o.client;
    this.#prefix = o.keyPrefix ?? DEFAULT_REDIS_KEY_PREFIX;
    this.#onError = o.onError ?? (() => {});
  }

  /** The Redis key of a scoped key (exposed for tests and operators). */
  key(scopedKey: string): string {
    return `${this.#prefix}idempotency:${scopedKey}`;
  }

  async claim(scopedKey: string, fingerprint: string, ttlMs: number): Promise<IdempotencyEntry | null> {
    const key = this.key(scopedKey);
    const pending: IdempotencyEntry = { fingerprint, state: 'pending' };
    try {
      if (down(this.#client)) throw new Error('Redis is not connected');
      for (let attempt = 0; attempt < CLAIM_ATTEMPTS; attempt++) {
        if ((await this.#client.set(key, JSON.stringify(pending), 'PX', ttlMs, 'NX')) === 'OK') return null;
        const text = await this.#client.get(key);
        // Released or expired between the two commands: claim again.
        if (text !== null) return parseEntry(text);
      }
      throw new Error(`the key changed hands ${CLAIM_ATTEMPTS} times while being claimed`);
    } catch (err) {
      if (!down(this.#client)) this.#onError('claim', err);
      throw new BackendUnavailableError('idempotency keys are unavailable: the shared store (Redis) does not answer; retry with the same key', { cause: err });
    }
  }

  async complete(scopedKey: string, entry: IdempotencyEntry, ttlMs: number): Promise<void> {
    try {
      if (down(this.#client)) throw new Error('Redis is not connected');
      const set = await this.#client.set(this.key(scopedKey), JSON.stringify(entry), 'PX', ttlMs, 'XX');
      if (set !== 'OK') throw new Error('the claim expired before the create finished: its result is not remembered');
    } catch (err) {
      this.#onError('complete', err);
    }
  }

  async release(scopedKey: string): Promise<void> {
    try {
      if (down(this.#client)) throw new Error('Redis is not connected');
      await this.#client.del(this.key(scopedKey));
    } catch (err) {
      this.#onError('release', err);
    }
  }
}

/**
 * Known to be away (between reconnect attempts, or closed): skip Redis instead of waiting for the
 * command deadline. The connection's own 'error' events already report the outage.
 */
function down(client: Redis): boolean {
  const s = client.status;
  return s === 'reconnecting' || s === 'close' || s === 'end';
}

/** A stored entry; anything else under the key is a fault, not a result to hand out. */
function parseEntry(text: string): IdempotencyEntry {
  const e = JSON.parse(text) as Partial<IdempotencyEntry>;
  if (typeof e?.fingerprint !== 'string' || (e.state !== 'pending' && e.state !== 'done')) throw new Error('the stored idempotency entry is malformed');
  return { fingerprint: e.fingerprint, state: e.state, result: e.result };
}
