/**
 * Subscriber demand summed across replicas. A backend's watcher runs on one replica (the lease
 * holder), but subscribers and pending operations are on every replica; the OpenStack poller
 * idles without listeners and polls fast while something is pending, so the holder must see all
 * of it. Each replica writes its own demand per backend into one hash,
 * `<prefix>{live}:demand:<backend>` (field: replica id; value: JSON), every `publishEveryMs`; the
 * holder reads the hash and sums the fresh entries. Nudges (look at these volumes soon: a mutation
 * was just accepted) travel in the same entry with a sequence number, so each is applied once.
 */
import type { RedisClient } from '../redis-client';
import type { VolumeRef } from '../../adapters/contract/model';
import type { WatchDemand } from '../../adapters/contract/watch';
import { DEFAULT_REDIS_KEY_PREFIX } from '../operations/redis-keys';
import { liveKey } from './keys';

/** A "look at these soon" from one replica. */
export interface Nudge {
  seq: number;
  refs: VolumeRef[];
  servers: string[];
}

/** One replica's demand on one backend, as published. */
export interface ReplicaDemand {
  replica: string;
  demand: WatchDemand;
  nudges: Nudge[];
  at: number;
}

/** Options of {@link SharedDemand}. */
export interface SharedDemandOptions {
  client: RedisClient;
  /** @default 'vg:' */
  keyPrefix?: string;
  /** Entries older than this are ignored (their replica stopped publishing), in ms. @default 5000 */
  staleMs?: number;
}

export const NO_DEMAND: WatchDemand = Object.freeze({ subscribers: 0, pendingVolumes: [], pendingServers: [] });

/** The sum of several demands. */
export function sumDemand(ds: readonly WatchDemand[]): WatchDemand {
  return {
    subscribers: ds.reduce((n, d) => n + d.subscribers, 0),
    pendingVolumes: ds.flatMap((d) => d.pendingVolumes),
    pendingServers: [...new Set(ds.flatMap((d) => d.pendingServers))],
  };
}

export class SharedDemand {
  readonly #client: RedisClient;
  readonly #prefix: string;
  readonly #staleMs: number;

  constructor(o: SharedDemandOptions) {
    this.#client = o.client;
    this.#prefix = o.keyPrefix ?? DEFAULT_REDIS_KEY_PREFIX;
    this.#staleMs = o.staleMs ?? 5000;
  }

  key(backend: string): string {
    return liveKey(this.#prefix, 'demand', backend);
  }

  async publish(backend: string, d: ReplicaDemand): Promise<void> {
    const key = this.key(backend);
    await this.#client
      .multi()
      .hset(key, d.replica, JSON.stringify(d))
      .pexpire(key, this.#staleMs * 2)
      .exec();
  }

  /** The fresh entries of the other replicas. */
  async gather(backend: string, self: string): Promise<ReplicaDemand[]> {
    const all = await this.#client.hgetall(this.key(backend));
    const oldest = Date.now() - this.#staleMs;
    const out: ReplicaDemand[] = [];
    for (const [replica, raw] of Object.entries(all)) {
      if (replica === self) continue;
      const d = JSON.parse(raw) as ReplicaDemand;
      if (d.at >= oldest) out.push(d);
    }
    return out;
  }

  async withdraw(backend: string, replica: string): Promise<void> {
    await this.#client.hdel(this.key(backend), replica);
  }
}
