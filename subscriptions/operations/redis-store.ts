/**
 * Operation records in Redis, so every replica behind a load balancer answers `operation(id)` for
 * an operation another replica started, follows its changes, and can finish it when the replica
 * driving it is gone (docs/scaling.md). Keys: {@link OperationKeys}.
 *
 * Every write is fenced ({@link FENCED_WRITE}): a compare-and-set on the record's version that never
 * moves a terminal record back, so a driver that was paused while another replica took over cannot
 * overwrite `SUCCEEDED` with `RUNNING`. The same script appends the change to the operations stream
 * (read by every replica, ./change-reader.ts) and keeps the index of running records by deadline
 * (read by the hand-over sweep, ./handover.ts). A finished record expires `retentionMs` after it
 * finished; a running one `retentionMs` after its deadline.
 *
 * Redis trouble never fails a caller's mutation and never rejects from `write`: every record this
 * process writes is also kept in a local {@link InProcessOperationStore}, and `get` answers from it
 * when Redis fails (or holds an older copy). Only a record this replica never saw, read while
 * Redis is unreachable, is an error (`BACKEND_UNAVAILABLE`, retryable).
 *
 * The client is the caller's: this store never connects or closes it.
 */
import { randomUUID } from 'node:crypto';
import { whileSlotMoves, type RedisClient } from '../redis-client';
import { BackendUnavailableError } from '../../adapters/contract/errors';
import { FENCED_WRITE, OperationKeys } from './redis-keys';
import {
  InProcessOperationStore,
  type FencedRecord,
  type FencedWrite,
  type RunningEntry,
  type SharedOperationStore,
} from './store';
import { TERMINAL } from './types';
import type { OperationRecord } from '../../adapters/contract/model';

/** Options of {@link RedisOperationStore}. */
export interface RedisOperationStoreOptions {
  /** A connected (or connecting) ioredis client; the caller owns its lifecycle. */
  client: RedisClient;
  /** Prefix of every key this store writes; replicas sharing records must use the same one. @default 'vg:' */
  keyPrefix?: string;
  /** This replica's id (names it as a record's driver). @default a random UUID */
  replica?: string;
  /** How long a finished operation stays readable (also the grace after a running one's deadline). @default 3600000 (1 h) */
  retentionMs?: number;
  /** Most records kept in the local fallback copy. @default 10000 */
  maxLocalRecords?: number;
  /** Entries the operations stream keeps (approximate trimming). @default 5000 */
  streamMaxLength?: number;
  /** Called when a Redis read or write fails (the server logs it). Must not throw. @default none */
  onError?: (op: 'put' | 'get' | 'forTarget', err: unknown) => void;
}

/**
 * How long a write waits while a Cluster refuses it because the `{live}` slot is migrating (the
 * script's keys split over two nodes, or the record not there yet: TRYAGAIN until the migration
 * ends). Long enough for a migration of the slot, short for a caller's mutation; past it the record
 * is kept here and written at its next write or after the next resync.
 */
const SLOT_MOVE_WAIT_MS = 5000;

/** Records checked per pipeline when finished records are written back. */
const RESTORE_BATCH = 500;

type WriteReply = [number, number, string];
/** The client with the fenced write defined (EVALSHA, loading the script once per connection). */
type FencedClient = RedisClient & { vgOperationWrite(...args: Array<string | number>): Promise<WriteReply> };
const COMMAND = 'vgOperationWrite';

export class RedisOperationStore implements SharedOperationStore {
  readonly replica: string;
  readonly keys: OperationKeys;
  readonly #client: RedisClient;
  readonly #retentionMs: number;
  readonly #maxLen: number;
  readonly #local: InProcessOperationStore;
  /** The version this process last wrote per record (for `put`, the unfenced interface). */
  readonly #versions = new Map<string, number>();
  /** Writes that did not reach Redis (it was away), the newest per record: {@link flush} retries them. */
  readonly #unshared = new Map<string, { r: OperationRecord; expected: number; driver: string | null }>();
  readonly #onError: (op: 'put' | 'get' | 'forTarget', err: unknown) => void;

  constructor(o: RedisOperationStoreOptions) {
    this.#client = o.client;
    if (!(COMMAND in o.client)) o.client.defineCommand(COMMAND, { numberOfKeys: 4, lua: FENCED_WRITE });
    this.keys = new OperationKeys(o.keyPrefix);
    this.replica = o.replica ?? randomUUID();
    this.#retentionMs = o.retentionMs ?? 3_600_000;
    this.#maxLen = o.streamMaxLength ?? 5000;
    this.#local = new InProcessOperationStore({
      retentionMs: this.#retentionMs,
      maxRecords: o.maxLocalRecords ?? 10_000,
    });
    this.#onError = o.onError ?? (() => {});
  }

  /** The Redis key of a record (exposed for tests and operators). */
  key(id: string): string {
    return this.keys.record(id);
  }

  /** Milliseconds a record should live from now: retention after it finished, or after its deadline while it runs. */
  ttlMs(r: OperationRecord, now = Date.now()): number {
    const from = TERMINAL.has(r.state) ? r.updatedAt : Math.max(r.deadline, now);
    return Math.max(1, from + this.#retentionMs - now);
  }

  /** A write fenced by the version this process last wrote (driven by this replica while running). */
  async put(r: OperationRecord): Promise<void> {
    await this.write(r, this.#versions.get(r.id) ?? 0, TERMINAL.has(r.state) ? null : this.replica);
  }

  async write(r: OperationRecord, expected: number, driver: string | null): Promise<FencedWrite> {
    if (this.#down()) return this.#keep(r, expected, driver);
    try {
      const w = await this.#fenced(r, expected, driver);
      this.#unshared.delete(r.id);
      // Stored by this replica at another version: a reply lost to a timeout after the script ran.
      if (!w.written && w.driver === this.replica && w.version > expected)
        return await this.write(r, w.version, driver);
      return w.written ? w : { written: false, version: w.version };
    } catch (err) {
      this.#onError('put', err);
      return this.#keep(r, expected, driver);
    }
  }

  /** Redis away: the record is kept here (and retried by {@link flush}); the write counts as done at `expected`. */
  async #keep(r: OperationRecord, expected: number, driver: string | null): Promise<FencedWrite> {
    await this.#local.put(r);
    this.#unshared.set(r.id, { r, expected, driver });
    return { written: true, version: expected };
  }

  /**
   * Writes again, fenced as before, what did not reach Redis while it was away (an operation that
   * finished meanwhile would otherwise stay running there), then the finished records Redis lost.
   * Rejects when Redis does not answer; what is left waits for the next call. @returns the records
   * whose write was refused (another replica moved them on meanwhile)
   */
  async flush(): Promise<OperationRecord[]> {
    const refused: OperationRecord[] = [];
    for (const [id, w] of [...this.#unshared]) {
      if (this.#down()) throw new Error('Redis is not connected');
      this.#unshared.delete(id);
      const done = await this.write(w.r, w.expected, w.driver);
      if (!done.written) refused.push(w.r);
    }
    await this.#restoreFinished();
    return refused;
  }

  /**
   * Writes back the finished records this process wrote (its local copy, within retention) that
   * Redis no longer has: lost with its data (a restart without persistence, or a failover that
   * dropped the tail they were written in). An idempotency key written back names its operation,
   * and a retry on another replica reads it from here. A record that already finished when Redis
   * lost it is written by nobody else: its driver is done with it. Rejects when Redis does not
   * answer (the caller tries again).
   */
  async #restoreFinished(): Promise<void> {
    const finished = this.#local.all().filter((r) => TERMINAL.has(r.state) && this.#fresh(r) !== null);
    for (let i = 0; i < finished.length; i += RESTORE_BATCH) {
      if (this.#down()) throw new Error('Redis is not connected');
      const batch = finished.slice(i, i + RESTORE_BATCH);
      const exists = this.#client.pipeline();
      for (const r of batch) exists.exists(this.keys.record(r.id));
      const answers = (await exists.exec()) ?? [];
      for (const [k, r] of batch.entries()) {
        const [err, n] = answers[k] ?? [null, 1];
        if (err) throw err;
        // Missing: the fenced write stores it as new (a copy another replica wrote back meanwhile wins).
        if (n === 0) await this.write(r, 0, null);
      }
    }
  }

  async #fenced(
    r: OperationRecord,
    expected: number,
    driver: string | null,
  ): Promise<FencedWrite & { driver?: string }> {
    const terminal = TERMINAL.has(r.state);
    const [ok, version, stored] = await whileSlotMoves(
      () =>
        (this.#client as FencedClient).vgOperationWrite(
          this.keys.record(r.id),
          this.keys.target(r.targetId),
          this.keys.running,
          this.keys.stream,
          expected,
          JSON.stringify(r),
          r.state,
          driver ?? '',
          this.ttlMs(r),
          r.deadline,
          terminal ? '1' : '0',
          r.id,
          this.#maxLen,
          this.replica,
        ),
      { maxMs: SLOT_MOVE_WAIT_MS },
    );
    if (ok !== 1) return { written: false, version, driver: stored };
    await this.#local.put(r);
    if (terminal) this.#versions.delete(r.id);
    else this.#versions.set(r.id, version);
    return { written: true, version };
  }

  async read(id: string): Promise<FencedRecord | null> {
    if (this.#down()) throw new Error('Redis is not connected');
    const [v, d, j] = await this.#client.hmget(this.keys.record(id), 'v', 'd', 'j');
    if (!v || !j) return null;
    return { record: JSON.parse(j) as OperationRecord, version: Number(v), driver: d || null };
  }

  async running(limit: number): Promise<RunningEntry[]> {
    if (this.#down()) throw new Error('Redis is not connected');
    const flat = await this.#client.zrange(this.keys.running, 0, limit - 1, 'WITHSCORES');
    const out: RunningEntry[] = [];
    for (let i = 0; i + 1 < flat.length; i += 2) out.push({ id: flat[i]!, deadline: Number(flat[i + 1]) });
    return out;
  }

  async forgetRunning(id: string): Promise<void> {
    await this.#client.zrem(this.keys.running, id);
  }

  async get(id: string): Promise<OperationRecord | null> {
    const local = this.#fresh(await this.#local.get(id));
    let remote: OperationRecord | null;
    try {
      remote = (await this.read(id))?.record ?? null;
    } catch (err) {
      if (!this.#down()) this.#onError('get', err);
      if (local) return local;
      throw new BackendUnavailableError('operation records are unavailable: the shared store (Redis) does not answer', {
        cause: err,
      });
    }
    if (remote && local) return remote.updatedAt >= local.updatedAt ? remote : local;
    return remote ?? local;
  }

  async forTarget(targetId: string): Promise<OperationRecord[]> {
    const local = (await this.#local.forTarget(targetId))
      .map((r) => this.#fresh(r))
      .filter((r): r is OperationRecord => r !== null);
    try {
      if (this.#down()) throw new Error('Redis is not connected');
      const ids = await this.#client.smembers(this.keys.target(targetId));
      const pipeline = this.#client.pipeline();
      for (const id of ids) pipeline.hget(this.keys.record(id), 'j');
      const texts = ids.length === 0 ? [] : ((await pipeline.exec()) ?? []);
      const byId = new Map(local.map((r) => [r.id, r]));
      for (const [err, t] of texts) {
        if (err) throw err;
        if (typeof t !== 'string') continue;
        const r = JSON.parse(t) as OperationRecord;
        const mine = byId.get(r.id);
        if (!mine || r.updatedAt >= mine.updatedAt) byId.set(r.id, r);
      }
      return [...byId.values()];
    } catch (err) {
      if (!this.#down()) this.#onError('forTarget', err);
      return local;
    }
  }

  /**
   * Known to be away (between reconnect attempts, or closed): skip Redis instead of waiting for
   * the command deadline. The connection's own 'error' events already report the outage.
   */
  #down(): boolean {
    const s = this.#client.status;
    return s === 'reconnecting' || s === 'close' || s === 'end';
  }

  /** The local copy unless it finished longer ago than retention (the memory store evicts only on writes). */
  #fresh(r: OperationRecord | null): OperationRecord | null {
    if (r && TERMINAL.has(r.state) && Date.now() - r.updatedAt > this.#retentionMs) return null;
    return r;
  }
}
