/**
 * Operation records in Redis, so every replica behind a load balancer can answer
 * `operation(id)` for an operation another replica started (docs/scaling.md).
 *
 * One key per record, `<keyPrefix>operation:<id>`, holding the record as JSON. A finished record
 * expires `retentionMs` after it finished (the memory store's retention); a running one expires
 * `retentionMs` after its deadline, so the record of a replica that died mid-poll does not stay
 * forever.
 *
 * Redis trouble never fails a caller's mutation and never rejects from `put`: every record this
 * process writes is also kept in a local {@link InProcessOperationStore}, and `get` answers from it
 * when Redis fails (or holds an older copy). Only a record this replica never saw, read while
 * Redis is unreachable, is an error (`BACKEND_UNAVAILABLE`, retryable).
 *
 * The client is the caller's: this store never connects or closes it.
 */
import type { Redis } from 'ioredis';
import { BackendUnavailableError } from '../../adapters/contract/errors';
import { InProcessOperationStore, type OperationStore } from './store';
import { TERMINAL } from './types';
import type { OperationRecord } from '../../adapters/contract/model';

/** Options of {@link RedisOperationStore}. */
export interface RedisOperationStoreOptions {
  /** A connected (or connecting) ioredis client; the caller owns its lifecycle. */
  client: Redis;
  /** Prefix of every key this store writes; replicas sharing records must use the same one. @default 'vg:' */
  keyPrefix?: string;
  /** How long a finished operation stays readable (also the grace after a running one's deadline). @default 3600000 (1 h) */
  retentionMs?: number;
  /** Most records kept in the local fallback copy. @default 10000 */
  maxLocalRecords?: number;
  /** Called when a Redis read or write fails (the server logs it). Must not throw. @default none */
  onError?: (op: 'put' | 'get' | 'forTarget', err: unknown) => void;
}

/** Default key prefix of {@link RedisOperationStore}. */
export const DEFAULT_REDIS_KEY_PREFIX = 'vg:';

export class RedisOperationStore implements OperationStore {
  readonly #client: Redis;
  readonly #prefix: string;
  readonly #retentionMs: number;
  readonly #local: InProcessOperationStore;
  readonly #onError: (op: 'put' | 'get' | 'forTarget', err: unknown) => void;

  constructor(o: RedisOperationStoreOptions) {
    this.#client = o.client;
    this.#prefix = o.keyPrefix ?? DEFAULT_REDIS_KEY_PREFIX;
    this.#retentionMs = o.retentionMs ?? 3_600_000;
    this.#local = new InProcessOperationStore({
      retentionMs: this.#retentionMs,
      maxRecords: o.maxLocalRecords ?? 10_000,
    });
    this.#onError = o.onError ?? (() => {});
  }

  /** The Redis key of a record (exposed for tests and operators). */
  key(id: string): string {
    return `${this.#prefix}operation:${id}`;
  }

  /** The Redis key of a target's set of record ids. */
  targetKey(targetId: string): string {
    return `${this.#prefix}operation-target:${targetId}`;
  }

  /** Milliseconds a record should live from now: retention after it finished, or after its deadline while it runs. */
  ttlMs(r: OperationRecord, now = Date.now()): number {
    const from = TERMINAL.has(r.state) ? r.updatedAt : Math.max(r.deadline, now);
    return Math.max(1, from + this.#retentionMs - now);
  }

  async put(r: OperationRecord): Promise<void> {
    await this.#local.put(r);
    if (this.#down()) return;
    try {
      const ttl = this.ttlMs(r);
      // The target's set lives at least as long as its newest record.
      await this.#client
        .multi()
        .set(this.key(r.id), JSON.stringify(r), 'PX', ttl)
        .sadd(this.targetKey(r.targetId), r.id)
        .pexpire(this.targetKey(r.targetId), ttl, 'GT')
        .pexpire(this.targetKey(r.targetId), ttl, 'NX')
        .exec();
    } catch (err) {
      this.#onError('put', err);
    }
  }

  async get(id: string): Promise<OperationRecord | null> {
    const local = this.#fresh(await this.#local.get(id));
    let remote: OperationRecord | null;
    try {
      if (this.#down()) throw new Error('Redis is not connected');
      const text = await this.#client.get(this.key(id));
      remote = text === null ? null : (JSON.parse(text) as OperationRecord);
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
      const ids = await this.#client.smembers(this.targetKey(targetId));
      const texts = ids.length === 0 ? [] : await this.#client.mget(ids.map((id) => this.key(id)));
      const byId = new Map(local.map((r) => [r.id, r]));
      for (const t of texts) {
        if (t === null) continue;
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
