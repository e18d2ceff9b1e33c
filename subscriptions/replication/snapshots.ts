/**
 * Snapshots of a backend's follower view in Redis, so a replica that starts (or lost its place)
 * begins from a full view and follows the log after it instead of from an empty one. The lease
 * holder writes them (replicated-watchers.ts); one key per backend,
 * `<prefix>{live}:view:<backend>`, holding the view as JSON with the log position it stands at.
 */
import type { RedisClient } from '../redis-client';
import type { Volume } from '../../adapters/contract/model';
import { DEFAULT_REDIS_KEY_PREFIX } from '../operations/redis-keys';
import { liveKey } from './keys';

/** One backend's view at a position of the event log. */
export interface ViewSnapshot {
  /** The cursor of the last event the view includes (or the log's head when it was taken). */
  cursor: string;
  volumes: Volume[];
  /** The replica that wrote it. */
  replica: string;
  /** When it was written (ms since epoch). */
  at: number;
}

/** Options of {@link ViewSnapshots}. */
export interface ViewSnapshotsOptions {
  client: RedisClient;
  /** @default 'vg:' */
  keyPrefix?: string;
  /** How long a snapshot is kept unless rewritten, in ms. @default 86400000 (24 h) */
  ttlMs?: number;
}

export class ViewSnapshots {
  readonly #client: RedisClient;
  readonly #prefix: string;
  readonly #ttlMs: number;

  constructor(o: ViewSnapshotsOptions) {
    this.#client = o.client;
    this.#prefix = o.keyPrefix ?? DEFAULT_REDIS_KEY_PREFIX;
    this.#ttlMs = o.ttlMs ?? 86_400_000;
  }

  key(backend: string): string {
    return liveKey(this.#prefix, 'view', backend);
  }

  async write(backend: string, s: ViewSnapshot): Promise<void> {
    await this.#client.set(this.key(backend), JSON.stringify(s), 'PX', this.#ttlMs);
  }

  /** The backend's snapshot; null when none (or not one this code wrote). */
  async read(backend: string): Promise<ViewSnapshot | null> {
    const raw = await this.#client.get(this.key(backend));
    if (raw === null) return null;
    const s = JSON.parse(raw) as Partial<ViewSnapshot>;
    return typeof s.cursor === 'string' && Array.isArray(s.volumes) ? (s as ViewSnapshot) : null;
  }
}
