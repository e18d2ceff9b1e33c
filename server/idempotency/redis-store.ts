/**
 * Idempotency keys in Redis, so a retry that reaches another replica behind the load balancer
 * finds the first request's claim or result (docs/scaling.md).
 *
 * One key per scoped key, `<keyPrefix>{live}:idempotency:<hash>` (the operation store's prefix), holding
 * the {@link IdempotencyEntry} as JSON: the input's fingerprint, the state and, once done, the
 * result (ids, never inputs or credentials).
 * - `claim`: `SET key <pending entry> NX PX ttl`, else `GET key`. One command decides the owner, so
 *   of two replicas claiming the same key at once exactly one runs the create.
 * - `complete`: `SET key <done entry> XX PX ttl` (a claim that expired meanwhile is not re-created).
 * - `release`: `DEL key`.
 *
 * Each replica also keeps its own copy of the keys it claimed and finished (bounded,
 * `localEntries`), and answers those from it.
 *
 * Redis trouble: unlike operation records there is no safe local fallback for a key this replica
 * does not hold, since another replica may hold it. So a claim that cannot reach Redis fails the
 * creating mutation with `BACKEND_UNAVAILABLE` (retryable) before any backend call: the client
 * retries later with the same key, and nothing is created twice. Once the backend has accepted the
 * create, Redis trouble no longer fails the mutation: `complete` and `release` never reject, they
 * report to `onError`; the result is in this replica's copy.
 *
 * Redis that lost its data (restarted without persistence, flushed): a marker key
 * (`<keyPrefix>{live}:idempotency-marker`, `redis-marker.ts`) is checked on every (re)connect, before any
 * claim. When it is gone or changed, this replica writes back every key it holds (`SET … NX`, with
 * the time each has left) and, for `recoveryWindowMs` (the claim TTL: by then any claim another
 * replica could not write back has expired anyway), refuses a create whose key it does not hold
 * and Redis does not have (`IdempotencyRecoveringError`: `BACKEND_UNAVAILABLE`, retryable,
 * `retryAfterSeconds`). A retry of a create this replica ran gets its first result; nothing is
 * created twice.
 *
 * The client is the caller's: this store never connects or closes it (it listens to its events).
 */
import { Cluster } from 'ioredis';
import type { RedisClient } from '../../subscriptions/redis-client';
import { BackendUnavailableError } from '../../adapters/contract/errors';
import { DEFAULT_REDIS_KEY_PREFIX } from '../../subscriptions/operations';
import { IdempotencyRecoveringError } from './errors';
import { checkMarker, replaceMarker, survived, writePosition, type ReplicationPosition } from './redis-marker';
import { IDEMPOTENCY_CLAIM_TTL_MS, type IdempotencyEntry, type IdempotencyStore } from '../../domain/idempotency';
import { InProcessIdempotencyStore } from './store';

/** What a replica did after finding that Redis lost its data. */
export interface IdempotencyRecovery {
  /** Keys it wrote back (those another replica had already written back are not counted). */
  restored: number;
  /** Until when it refuses creates with keys it does not hold. */
  refusingUntil: Date;
}

/** Options of {@link RedisIdempotencyStore}. */
export interface RedisIdempotencyStoreOptions {
  /** A connected (or connecting) ioredis client; the caller owns its lifecycle. */
  client: RedisClient;
  /** Prefix of every key this store writes; replicas sharing keys must use the same one. @default 'vg:' */
  keyPrefix?: string;
  /** Called when a Redis command fails (the server logs it). Must not throw. @default none */
  onError?: (op: 'claim' | 'complete' | 'release' | 'check', err: unknown) => void;
  /** Called when Redis lost its data and this replica wrote back its keys (the server logs it). Must not throw. @default none */
  onRecovery?: (r: IdempotencyRecovery) => void;
  /** Most keys this replica keeps its own copy of, to answer and write back; the oldest go first. @default 10000 */
  localEntries?: number;
  /** How long creates with keys this replica does not hold are refused after Redis lost its data. @default IDEMPOTENCY_CLAIM_TTL_MS (1 h) */
  recoveryWindowMs?: number;
}

/** How often a claim retries when the key it lost to vanished before it could be read. */
const CLAIM_ATTEMPTS = 3;
/** How long a claim waits for a connection that is being made (the command deadline of server/redis.ts). */
const CONNECT_WAIT_MS = 2000;
/** Pause between marker checks while a Cluster node is away. */
const RECHECK_MS = 1000;
/** Keys written back per pipeline. */
const WRITE_BACK_BATCH = 500;
/**
 * After another primary answers with this replica's own writes intact, how long creates with keys
 * it does not hold wait for the other replicas to check theirs (one that lost writes replaces the
 * marker, and the check at the end of this finds it), in ms.
 */
export const FAILOVER_SETTLE_MS = 5000;

export class RedisIdempotencyStore implements IdempotencyStore {
  readonly #client: RedisClient;
  readonly #prefix: string;
  readonly #onError: NonNullable<RedisIdempotencyStoreOptions['onError']>;
  readonly #onRecovery: NonNullable<RedisIdempotencyStoreOptions['onRecovery']>;
  readonly #windowMs: number;
  /** This replica's copy of the keys it claimed and finished. */
  readonly #local: InProcessIdempotencyStore;
  /** The marker seen last; null before the first check. */
  #marker: string | null = null;
  /** The current connection's marker check (and write-back); null while disconnected or not yet run. */
  #check: Promise<void> | null = null;
  /** Resolved at the next 'ready' (one promise for every caller waiting on a connection being made). */
  #nextReady: { promise: Promise<void>; resolve: () => void } | null = null;
  #refuseUntil = 0;
  /** The `run_id` of the server the last check answered from; null before the first. */
  #runId: string | null = null;
  /** Where this replica's newest write to Redis stands in the primary's history; null before one. */
  #lastWrite: ReplicationPosition | null = null;
  #recheck: NodeJS.Timeout | null = null;
  /** A check is running now. */
  #checking = false;
  /** A Cluster node was lost and no marker check has succeeded since. */
  #rechecking = false;

  constructor(o: RedisIdempotencyStoreOptions) {
    this.#client = o.client;
    this.#prefix = o.keyPrefix ?? DEFAULT_REDIS_KEY_PREFIX;
    this.#onError = o.onError ?? (() => {});
    this.#onRecovery = o.onRecovery ?? (() => {});
    this.#windowMs = o.recoveryWindowMs ?? IDEMPOTENCY_CLAIM_TTL_MS;
    this.#local = new InProcessIdempotencyStore({ maxEntries: o.localEntries ?? 10_000 });
    // Every (re)connect is checked before anything else this store sends on it.
    this.#client.on('ready', () => {
      void this.#startCheck();
      this.#nextReady?.resolve();
      this.#nextReady = null;
    });
    this.#client.on('close', () => (this.#check = null));
    if (this.#client instanceof Cluster) {
      // A Cluster stays 'ready' while one node goes and comes back (maybe empty, restarted without
      // persistence): losing a node's connection is this store's disconnect. Claims check again
      // from then on, and so does this store, until a check succeeds: the write-back of a node
      // that came back empty does not wait for a claim.
      this.#client.on('-node', () => {
        this.#check = null;
        this.#recheckAfterNodeLoss();
      });
    }
    if (this.#client.status === 'ready') void this.#startCheck();
  }

  /** The Redis key of a scoped key (exposed for tests and operators). */
  key(scopedKey: string): string {
    return `${this.#prefix}{live}:idempotency:${scopedKey}`;
  }

  /** The marker key that tells lost data (exposed for tests and operators). */
  get markerKey(): string {
    return `${this.#prefix}{live}:idempotency-marker`;
  }

  async claim(scopedKey: string, fingerprint: string, ttlMs: number): Promise<IdempotencyEntry | null> {
    // A key this replica claimed or finished: its own copy answers, even while Redis is away.
    const held = this.#local.held(scopedKey);
    if (held) return held;
    const key = this.key(scopedKey);
    const pending: IdempotencyEntry = { fingerprint, state: 'pending' };
    let refusing: number;
    try {
      if (down(this.#client)) throw new Error('Redis is not connected');
      await this.#checkedNow();
      refusing = this.#refuseUntil - Date.now();
      if (refusing > 0) {
        // Recovering: a key another replica wrote back is answered; any other may not be back yet.
        const text = await this.#client.get(key);
        if (text !== null) return parseEntry(text);
      } else {
        for (let attempt = 0; attempt < CLAIM_ATTEMPTS; attempt++) {
          if ((await this.#client.set(key, JSON.stringify(pending), 'PX', ttlMs, 'NX')) === 'OK') {
            await this.#local.complete(scopedKey, pending, ttlMs);
            await this.#wrote();
            return null;
          }
          const text = await this.#client.get(key);
          // Released or expired between the two commands: claim again.
          if (text !== null) return parseEntry(text);
        }
        throw new Error(`the key changed hands ${CLAIM_ATTEMPTS} times while being claimed`);
      }
    } catch (err) {
      if (!down(this.#client)) this.#onError('claim', err);
      throw new BackendUnavailableError(
        'idempotency keys are unavailable: the shared store (Redis) does not answer; retry with the same key',
        { cause: err },
      );
    }
    throw new IdempotencyRecoveringError(Math.max(1, Math.ceil(refusing / 1000)));
  }

  async complete(scopedKey: string, entry: IdempotencyEntry, ttlMs: number): Promise<void> {
    // This replica's copy first: if Redis is away (or loses the claim on a restart), it is written back.
    await this.#local.complete(scopedKey, entry, ttlMs);
    try {
      if (down(this.#client)) throw new Error('Redis is not connected');
      await this.#whenChecked();
      const set = await this.#client.set(this.key(scopedKey), JSON.stringify(entry), 'PX', ttlMs, 'XX');
      if (set !== 'OK') {
        // Redis answered and the claim is gone: it expired, and the key may be another replica's now.
        await this.#local.release(scopedKey);
        throw new Error('the claim expired before the create finished: its result is not remembered');
      }
      await this.#wrote();
    } catch (err) {
      this.#onError('complete', err);
    }
  }

  async release(scopedKey: string): Promise<void> {
    await this.#local.release(scopedKey);
    try {
      if (down(this.#client)) throw new Error('Redis is not connected');
      // After any write-back, which could otherwise bring the key back.
      await this.#whenChecked();
      await this.#client.del(this.key(scopedKey));
    } catch (err) {
      this.#onError('release', err);
    }
  }

  /** Starts the marker check (reported when it fails, unless `quiet`); answers it. */
  #startCheck(quiet = false): Promise<void> {
    const check = this.#verify();
    this.#check = check;
    this.#checking = true;
    void check.finally(() => (this.#checking = this.#check !== check && this.#checking)).catch(() => {});
    check.catch((err: unknown) => {
      // Checked again by the next claim (or the next reconnect); claims wait for it meanwhile.
      if (this.#check === check) this.#check = null;
      if (!quiet) this.#onError('check', err);
    });
    return check;
  }

  /** Checks every {@link RECHECK_MS} until a check succeeds (once per loss of a Cluster node; failures reported once). */
  #recheckAfterNodeLoss(): void {
    if (this.#rechecking) return;
    this.#rechecking = true;
    let reported = false;
    const attempt = (): void => {
      setTimeout(() => {
        const check = this.#check ?? this.#startCheck(reported);
        reported = true;
        check.then(
          () => (this.#rechecking = false),
          () => attempt(),
        );
      }, RECHECK_MS).unref();
    };
    attempt();
  }

  /**
   * A check of the marker and the server for a claim, after the connection's: another primary may
   * answer since (a Cluster fails over without the client reconnecting). One at a time.
   */
  async #checkedNow(): Promise<void> {
    await this.#whenChecked();
    if (!this.#checking) void this.#startCheck();
    await this.#check;
  }

  /** Resolves once this connection's marker check is done; rejects when there is no connection within the wait. */
  async #whenChecked(): Promise<void> {
    if (!this.#check && this.#client.status === 'ready') void this.#startCheck();
    if (!this.#check) {
      // Being made (the first connect, or just after a reconnect began): wait a little for it.
      if (!this.#nextReady) {
        let resolve!: () => void;
        const promise = new Promise<void>((r) => (resolve = r));
        this.#nextReady = { promise, resolve };
      }
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<never>(
        (_, reject) => (timer = setTimeout(() => reject(new Error('Redis is not connected')), CONNECT_WAIT_MS)),
      );
      await Promise.race([this.#nextReady.promise, timeout]).finally(() => clearTimeout(timer));
    }
    if (!this.#check) throw new Error('Redis is not connected');
    return this.#check;
  }

  /** Notes where this replica's newest write stands (a failover that dropped it is then told). Never rejects. */
  async #wrote(): Promise<void> {
    this.#lastWrite = await writePosition(this.#client, this.markerKey).catch(() => this.#lastWrite);
  }

  /**
   * Compares the marker; when Redis lost its data, opens the refusal window and writes back every
   * key held. Another primary (a failover) with this replica's newest write missing counts as a
   * loss, and the marker is replaced so every replica recovers; with it there, the keys are
   * written back anyway and creates with keys not held wait {@link FAILOVER_SETTLE_MS} for the
   * other replicas' checks, then the marker is checked again.
   */
  async #verify(): Promise<void> {
    const found = await checkMarker(this.#client, this.markerKey, this.#marker);
    const moved = this.#runId !== null && found.runId !== this.#runId;
    this.#runId = found.runId;
    let { marker, lost } = found;
    if (moved && !lost && this.#lastWrite && !survived(this.#lastWrite, found)) {
      marker = await replaceMarker(this.#client, this.markerKey);
      lost = true;
    }
    if (!lost && !moved) {
      this.#marker = marker;
      return;
    }
    if (!lost) {
      this.#refuseUntil = Math.max(this.#refuseUntil, Date.now() + FAILOVER_SETTLE_MS);
      if (this.#recheck) clearTimeout(this.#recheck);
      this.#recheck = setTimeout(() => void this.#startCheck(), FAILOVER_SETTLE_MS);
      this.#recheck.unref();
      await this.#writeBack();
      this.#marker = marker;
      return;
    }
    this.#refuseUntil = Math.max(this.#refuseUntil, Date.now() + this.#windowMs);
    const restored = await this.#writeBack();
    // Only now: a write-back cut short is found again (and redone) at the next check.
    this.#marker = marker;
    this.#lastWrite = null;
    this.#onRecovery({ restored, refusingUntil: new Date(this.#refuseUntil) });
  }

  /** Writes back every key this replica holds that Redis does not have; answers how many. */
  async #writeBack(): Promise<number> {
    let restored = 0;
    let batch = this.#client.pipeline();
    const flush = async (): Promise<void> => {
      for (const [err, answer] of (await batch.exec()) ?? []) {
        if (err) throw err;
        if (answer === 'OK') restored++;
      }
      batch = this.#client.pipeline();
    };
    for (const { scopedKey, entry, ttlMs } of this.#local.live()) {
      batch.set(this.key(scopedKey), JSON.stringify(entry), 'PX', ttlMs, 'NX');
      if (batch.length >= WRITE_BACK_BATCH) await flush();
    }
    if (batch.length > 0) await flush();
    return restored;
  }
}

/**
 * Known to be away (between reconnect attempts, or closed): skip Redis instead of waiting for the
 * command deadline. The connection's own 'error' events already report the outage.
 */
function down(client: RedisClient): boolean {
  const s = client.status;
  return s === 'reconnecting' || s === 'close' || s === 'end';
}

/** A stored entry; anything else under the key is a fault, not a result to hand out. */
function parseEntry(text: string): IdempotencyEntry {
  const e = JSON.parse(text) as Partial<IdempotencyEntry>;
  if (typeof e?.fingerprint !== 'string' || (e.state !== 'pending' && e.state !== 'done'))
    throw new Error('the stored idempotency entry is malformed');
  return { fingerprint: e.fingerprint, state: e.state, result: e.result };
}
