/**
 * The loaders that the executions of one event with the same credentials share: the execution
 * context's own (per-request loaders, so each distinct read is one request for all of them),
 * except that plugins and Nova servers, which rarely change, are first looked up in a short-lived
 * cache kept per credential, and that a backend's health, which the gateway probes with its own
 * means and no credential, is probed once per backend for the whole event.
 */
import DataLoader from 'dataloader';
import { LRUCache } from 'lru-cache';
import type { CallerCredential } from '../../adapters/contract/call-options';
import type { BackendHealth } from '../../adapters/contract/model';
import { asError } from '../../adapters/http/concurrency';
import type { Loaders, PluginRef, ServerKey } from '../../domain/loaders';
import { tokenHash } from './access';
import type { EventReadHooks } from './event-read-budget';

/** What {@link EventReadCache} holds: a read's answer (null included: not found, or hidden from the credential). */
interface Kept {
  value: unknown;
}

/**
 * Plugins and Nova servers read for events, by (what, backend, the credential's token hash, id):
 * an entry serves only the credential that read it, never another caller. Bounded in entries,
 * each kept `ttlMs` at most; failures are not kept.
 */
export class EventReadCache {
  readonly #lru: LRUCache<string, Kept> | undefined;

  /** @param ttlMs 0: nothing is kept */
  constructor(
    ttlMs: number,
    maxEntries: number,
    private readonly hooks: EventReadHooks = {},
  ) {
    this.#lru = ttlMs > 0 && maxEntries > 0 ? new LRUCache<string, Kept>({ max: maxEntries, ttl: ttlMs }) : undefined;
  }

  /** A loader answering from the cache, else from `inner` (whose answers it then keeps). */
  loader<K, V>(inner: DataLoader<K, V, string>, key: (k: K) => string): DataLoader<K, V, string> {
    const lru = this.#lru;
    if (!lru) return inner;
    return new DataLoader<K, V, string>(
      (keys) =>
        Promise.all(
          keys.map((k): V | Promise<V | Error> => {
            const kept = lru.get(key(k));
            if (kept) {
              this.hooks.cacheHit?.();
              return kept.value as V;
            }
            return inner.load(k).then((value) => {
              lru.set(key(k), { value });
              return value;
            }, asError);
          }),
        ),
      { cacheKeyFn: key },
    );
  }
}

/** Loaders over one execution context's own, for the executions of one event with the same credentials. */
export class EventLoaders implements Loaders {
  #plugin: Loaders['plugin'] | undefined;
  #server: Loaders['server'] | undefined;

  constructor(
    private readonly base: Loaders,
    private readonly credentials: ReadonlyMap<string, CallerCredential>,
    private readonly cache: EventReadCache,
    /** The event's health loader, shared by every credential. */
    private readonly eventHealth: () => DataLoader<string, BackendHealth>,
  ) {}

  /** The cache key of a read of `backend`'s `id` with this credential. */
  #key(what: string, backend: string, id: string): string {
    return `${what}\0${backend}\0${tokenHash(this.credentials.get(backend) ?? {})}\0${id}`;
  }

  get volume(): Loaders['volume'] {
    return this.base.volume;
  }
  get snapshot(): Loaders['snapshot'] {
    return this.base.snapshot;
  }
  get plugin(): Loaders['plugin'] {
    return (this.#plugin ??= this.cache.loader(this.base.plugin, (r: PluginRef) =>
      this.#key('plugin', r.backend, r.nativeId),
    ));
  }
  get health(): Loaders['health'] {
    return this.eventHealth();
  }
  get server(): Loaders['server'] {
    return (this.#server ??= this.cache.loader(this.base.server, (k: ServerKey) =>
      this.#key('server', k.backend, k.id),
    ));
  }
  get serverAttachments(): Loaders['serverAttachments'] {
    return this.base.serverAttachments;
  }
  get nodeClaims(): Loaders['nodeClaims'] {
    return this.base.nodeClaims;
  }
}
