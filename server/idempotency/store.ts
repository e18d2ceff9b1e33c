/**
 * Where idempotency keys are remembered: in this process, or in Redis when replicas share work
 * (`redis-store.ts`). Entries are keyed by a hash of (backend, caller credential, mutation, key),
 * so callers never see each other's results, and hold only JSON results (ids), never inputs. The
 * interface they implement is the domain's, with the rule that uses it (domain/idempotency.ts).
 */
import type { IdempotencyEntry, IdempotencyStore } from '../../domain/idempotency';

/** Options of the in-process store. */
export interface InProcessIdempotencyStoreOptions {
  /** Most entries kept; the oldest go first. @default 10000 */
  maxEntries?: number;
}

/** Entries in this process's memory, bounded in number and time. */
export class InProcessIdempotencyStore implements IdempotencyStore {
  readonly #entries = new Map<string, { entry: IdempotencyEntry; expires: number }>();
  readonly #max: number;

  constructor(o: InProcessIdempotencyStoreOptions = {}) {
    this.#max = o.maxEntries ?? 10_000;
  }

  async claim(scopedKey: string, fingerprint: string, ttlMs: number): Promise<IdempotencyEntry | null> {
    const now = Date.now();
    const found = this.#entries.get(scopedKey);
    if (found && found.expires > now) return found.entry;
    this.#entries.delete(scopedKey);
    this.#put(scopedKey, { fingerprint, state: 'pending' }, ttlMs);
    return null;
  }

  async complete(scopedKey: string, entry: IdempotencyEntry, ttlMs: number): Promise<void> {
    this.#put(scopedKey, entry, ttlMs);
  }

  /** Sets an entry; a new key makes room first by dropping the oldest. */
  #put(scopedKey: string, entry: IdempotencyEntry, ttlMs: number): void {
    if (!this.#entries.has(scopedKey))
      while (this.#entries.size >= this.#max) this.#entries.delete(this.#entries.keys().next().value!);
    this.#entries.set(scopedKey, { entry, expires: Date.now() + ttlMs });
  }

  async release(scopedKey: string): Promise<void> {
    this.#entries.delete(scopedKey);
  }

  /** The entry held for `scopedKey`, if it has not expired. */
  held(scopedKey: string): IdempotencyEntry | undefined {
    const found = this.#entries.get(scopedKey);
    return found && found.expires > Date.now() ? found.entry : undefined;
  }

  /** Every key held now, oldest first, with the time its entry has left (a live view: entries read as they are when reached). */
  *live(): Generator<{ scopedKey: string; entry: IdempotencyEntry; ttlMs: number }> {
    for (const scopedKey of [...this.#entries.keys()]) {
      const found = this.#entries.get(scopedKey);
      const ttlMs = found ? found.expires - Date.now() : 0;
      if (found && ttlMs > 0) yield { scopedKey, entry: found.entry, ttlMs };
    }
  }
}
