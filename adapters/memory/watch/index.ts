/**
 * The memory backend's watcher: the store tells it of every change as it happens, so its view is
 * the store itself and it is current from `start()` until `stop()`. Deltas are delivered on a
 * microtask after the change, in order, batched per turn of the event loop.
 */
import type { Volume, VolumeRef } from '../../contract/model';
import type { VolumeDelta, VolumeWatcher, WatcherOptions, WatcherState, WatcherStatus } from '../../contract/watch';
import type { MemoryStore } from '../data/store';

export class MemoryWatcher implements VolumeWatcher {
  #state: WatcherState = 'STARTING';
  #unsubscribe: (() => void) | null = null;
  #batch: VolumeDelta[] = [];

  constructor(
    readonly backend: string,
    readonly store: MemoryStore,
    readonly o: WatcherOptions,
  ) {}

  get current(): boolean {
    return this.#state === 'STREAMING';
  }

  start(): void {
    if (this.#unsubscribe) return;
    this.#unsubscribe = this.store.onChange((before, after) => this.#push(before, after));
    this.#setState('STREAMING');
  }

  async stop(): Promise<void> {
    this.#unsubscribe?.();
    this.#unsubscribe = null;
    this.#setState('STOPPED');
  }

  status(): WatcherStatus {
    const current = this.current;
    return {
      backend: this.backend,
      state: this.#state,
      source: 'EVENT_STREAM',
      volumes: this.store.size,
      currentAt: current ? Date.now() : null,
      lagMs: current ? 0 : null,
      message: null,
    };
  }

  volume(ref: VolumeRef): Volume | undefined {
    return ref.backend === this.backend ? this.store.volume(ref.namespace, ref.nativeId) : undefined;
  }

  volumes(): Volume[] {
    return this.store.keys().flatMap((k) => this.store.volumeByKey(k) ?? []);
  }

  /** Nothing to tune: the store pushes every change. */
  setDemand(): void {}

  /** Nothing to look at: the store pushes every change. */
  nudge(): void {}

  #push(before: Volume | null, after: Volume | null): void {
    if (this.#batch.length === 0) queueMicrotask(() => this.#flush());
    this.#batch.push({ before, after, observedAt: new Date().toISOString() });
  }

  #flush(): void {
    const deltas = this.#batch;
    this.#batch = [];
    if (deltas.length > 0 && this.#unsubscribe) this.o.onDeltas(deltas);
  }

  #setState(state: WatcherState): void {
    this.#state = state;
    this.o.onStatus?.(this.status());
  }
}
