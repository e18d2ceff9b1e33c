/**
 * The watcher directory: per backend, the watcher the live feed runs, and what the rest of the
 * gateway may do with it while it is current. Built before the operation tracker and the loaders,
 * which both ask it (watched operations and watch-fed reads, docs/architecture.md); the live
 * feed registers each watcher it starts. A gateway without a live hub has an empty directory:
 * operations are polled with the caller's credential and every read goes to the backend.
 */
import type { VolumeBackend } from '../adapters/contract/backend';
import type { Volume, VolumeRef } from '../adapters/contract/model';
import type { VolumeWatcher } from '../adapters/contract/watch';
import type { ServiceCredential, WatchedScopes } from '../subscriptions/operations';

/** A current watcher's view of one backend's volumes (the watcher's service credential read them). */
export type WatchView = (ref: VolumeRef) => Volume | undefined;

/** What the loaders ask: a view that may serve a caller's reads once the caller's own read proved access. */
export interface ReadViews {
  /**
   * The view of `scope` of `backend` that may answer callers' volume reads: only for a backend
   * whose `watching` facet has a `viewReadProof`, while its watcher is current and covers the
   * scope; undefined otherwise. The caller must still prove access with it (domain/loaders.ts).
   */
  readView(backend: string, scope: string): WatchView | undefined;
}

/**
 * Answers the operation tracker (`WatchedScopes`: which operations are checked with the service
 * credential) and the loaders (`ReadViews`: which reads a view may serve).
 */
export class WatcherDirectory implements WatchedScopes, ReadViews {
  readonly #find: (backend: string) => VolumeBackend | undefined;
  readonly #watchers = new Map<string, VolumeWatcher>();

  /** @param find the configured backend of an id (`BackendRegistry.find`): its `watching` and `subscriberAccess` facets. */
  constructor(find: (backend: string) => VolumeBackend | undefined) {
    this.#find = find;
  }

  /** Records the watcher running for a backend (the live feed, as it starts one); it replaces any earlier one. */
  register(backend: string, watcher: VolumeWatcher): void {
    this.#watchers.set(backend, watcher);
  }

  /** The running watcher of a backend, current or not. */
  watcher(backend: string): VolumeWatcher | undefined {
    return this.#watchers.get(backend);
  }

  /** Every running watcher by backend id, in registration order. */
  entries(): Array<[backend: string, watcher: VolumeWatcher]> {
    return [...this.#watchers];
  }

  /**
   * The backend's watcher if its view is complete and current and, with `scope`, covers that scope
   * (a watcher that says nothing covers every scope).
   */
  current(backend: string, scope?: string): VolumeWatcher | undefined {
    const w = this.#watchers.get(backend);
    return w && w.current && (scope === undefined || (w.covers?.(scope) ?? true)) ? w : undefined;
  }

  readView(backend: string, scope: string): WatchView | undefined {
    const w = this.#find(backend)?.watching?.viewReadProof ? this.current(backend, scope) : undefined;
    return w ? (ref) => w.volume(ref) : undefined;
  }

  serviceCredential(backend: string, scope: string): ServiceCredential | undefined {
    const access = this.#find(backend)?.subscriberAccess;
    return access && this.current(backend, scope) ? () => access.serviceCredential() : undefined;
  }
}
