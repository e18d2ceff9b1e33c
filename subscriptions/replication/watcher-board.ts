/**
 * The lease holder's watcher, as every replica sees it: its status (state, lag, message) and the
 * scopes its view holds, published in Redis (`<prefix>{live}:watcher:<backend>`, JSON, expiring
 * unless republished) on every state change and every `publishEveryMs`. Other replicas answer
 * `/readyz`, coverage and "current" from it (follower-watcher.ts).
 */
import type { RedisClient } from '../redis-client';
import type { VolumeWatcher, WatcherStatus } from '../../adapters/contract/watch';
import { DEFAULT_REDIS_KEY_PREFIX } from '../operations/redis-keys';
import { liveKey } from './keys';

/** A holder's watcher as published. */
export interface PublishedWatcher {
  /** The replica that holds the lease and runs the watcher. */
  replica: string;
  status: WatcherStatus;
  /** Whether the view is complete and current (`VolumeWatcher.current`). */
  current: boolean;
  /** The one scope the view holds, or null for every scope (`VolumeWatcher.onlyScope`). */
  onlyScope: string | null;
  /** When it was published (ms since epoch). */
  at: number;
}

/** Options of {@link WatcherBoard}. */
export interface WatcherBoardOptions {
  client: RedisClient;
  /** @default 'vg:' */
  keyPrefix?: string;
  /** How long a publication stands unless renewed, in ms: past it, followers count the holder's watcher as gone. @default 5000 */
  ttlMs?: number;
}

export class WatcherBoard {
  readonly #client: RedisClient;
  readonly #prefix: string;
  readonly #ttlMs: number;

  constructor(o: WatcherBoardOptions) {
    this.#client = o.client;
    this.#prefix = o.keyPrefix ?? DEFAULT_REDIS_KEY_PREFIX;
    this.#ttlMs = o.ttlMs ?? 5000;
  }

  key(backend: string): string {
    return liveKey(this.#prefix, 'watcher', backend);
  }

  async publish(replica: string, w: VolumeWatcher): Promise<void> {
    const p: PublishedWatcher = {
      replica,
      status: w.status(),
      current: w.current,
      onlyScope: w.onlyScope?.() ?? null,
      at: Date.now(),
    };
    await this.#client.set(this.key(w.backend), JSON.stringify(p), 'PX', this.#ttlMs);
  }

  /** Removes this replica's publication (it gave the lease up). */
  async withdraw(replica: string, backend: string): Promise<void> {
    const raw = await this.#client.get(this.key(backend));
    if (raw !== null && (JSON.parse(raw) as PublishedWatcher).replica === replica)
      await this.#client.del(this.key(backend));
  }

  async read(backend: string): Promise<PublishedWatcher | null> {
    const raw = await this.#client.get(this.key(backend));
    return raw === null ? null : (JSON.parse(raw) as PublishedWatcher);
  }
}
