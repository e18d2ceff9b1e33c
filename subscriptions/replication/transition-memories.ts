/**
 * The lease holder's memory of each backend's transitions (`Transitions.remembered()`, what folds the
 * gateway's own ATTACHING/DETACHING with the watcher's sighting, and statuses folded into an attach
 * or detach) in Redis, `<prefix>{live}:transitions:<backend>`. The holder writes it with every
 * append, in the fenced append script (`AppendOptions.keep`), so it always matches the log; the
 * replica that takes the lease over reads it before its watcher starts, and neither doubles nor
 * drops an event the old holder would have folded.
 */
import type { RedisClient } from '../redis-client';
import type { TransitionsState } from '../events/transitions';
import { DEFAULT_REDIS_KEY_PREFIX } from '../operations/redis-keys';
import { liveKey } from './keys';

/** Options of {@link TransitionMemories}. */
export interface TransitionMemoriesOptions {
  client: RedisClient;
  /** @default 'vg:' */
  keyPrefix?: string;
}

export class TransitionMemories {
  readonly #client: RedisClient;
  readonly #prefix: string;

  constructor(o: TransitionMemoriesOptions) {
    this.#client = o.client;
    this.#prefix = o.keyPrefix ?? DEFAULT_REDIS_KEY_PREFIX;
  }

  key(backend: string): string {
    return liveKey(this.#prefix, 'transitions', backend);
  }

  /** The backend's memory as the last holder wrote it; null when none (or not one this code wrote). */
  async read(backend: string): Promise<TransitionsState | null> {
    const raw = await this.#client.get(this.key(backend));
    if (raw === null) return null;
    try {
      const m = JSON.parse(raw) as Partial<TransitionsState>;
      return Array.isArray(m.announced) && Array.isArray(m.reported) ? (m as TransitionsState) : null;
    } catch {
      return null;
    }
  }
}
