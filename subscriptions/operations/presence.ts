/**
 * Replica liveness in Redis: `<prefix>{live}:replica:<id>`, set with a short TTL and refreshed
 * while the replica runs, deleted when it stops. A replica whose key is gone (expired: killed,
 * paused or cut off past the TTL; deleted: shut down) drives nothing any more, and the records it
 * drove are finished by another replica (./handover.ts).
 */
import type { RedisClient } from '../redis-client';
import type { OperationKeys } from './redis-keys';

/** Options of {@link ReplicaPresence}. */
export interface ReplicaPresenceOptions {
  client: RedisClient;
  keys: OperationKeys;
  /** This replica's id. */
  replica: string;
  /** Lifetime of the key; refreshed every third of it. @default 10000 */
  ttlMs?: number;
  /** Called when a refresh fails (Redis away; retried at the next one). Must not throw. @default none */
  onError?: (err: unknown) => void;
}

export class ReplicaPresence {
  readonly #o: ReplicaPresenceOptions;
  readonly #ttlMs: number;
  #timer: NodeJS.Timeout | null = null;

  constructor(o: ReplicaPresenceOptions) {
    this.#o = o;
    this.#ttlMs = o.ttlMs ?? 10_000;
  }

  /** Sets the key now, then every third of the TTL. */
  start(): void {
    if (this.#timer) return;
    void this.#refresh();
    this.#timer = setInterval(() => void this.#refresh(), Math.max(50, Math.floor(this.#ttlMs / 3)));
    this.#timer.unref();
  }

  /** Of `ids`, those whose key exists (one MGET). */
  async alive(ids: readonly string[]): Promise<Set<string>> {
    const unique = [...new Set(ids)];
    if (unique.length === 0) return new Set();
    const values = await this.#o.client.mget(unique.map((id) => this.#o.keys.replica(id)));
    return new Set(unique.filter((_, i) => values[i] !== null));
  }

  /** Stops refreshing and deletes the key, so other replicas take over at once. Never rejects. */
  async stop(): Promise<void> {
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = null;
    if (this.#o.client.status !== 'ready') return;
    await this.#o.client.del(this.#o.keys.replica(this.#o.replica)).catch((err: unknown) => this.#o.onError?.(err));
  }

  async #refresh(): Promise<void> {
    const s = this.#o.client.status;
    if (s === 'reconnecting' || s === 'close' || s === 'end') return;
    try {
      await this.#o.client.set(this.#o.keys.replica(this.#o.replica), String(Date.now()), 'PX', this.#ttlMs);
    } catch (err) {
      this.#o.onError?.(err);
    }
  }
}
