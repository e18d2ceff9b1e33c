/**
 * The volumes the Nomad watcher must read again: marked by events, read once per burst (the next
 * turn of the event loop, after the frames that came together), and marked again after a failed
 * read to be retried after a pause.
 */
import type { VolumeRef } from '../../contract/model';
import { refKey } from './view';

export class DirtyVolumes {
  #refs = new Map<string, VolumeRef>();
  #queued = false;
  #retry: NodeJS.Timeout | undefined;
  #stopped = false;

  /** @param flush queues the read of what `take()` returns (the watcher's serial queue) */
  constructor(private readonly flush: (take: () => VolumeRef[]) => void) {}

  mark(ref: VolumeRef): void {
    if (this.#stopped) return;
    this.#refs.set(refKey(ref), ref);
    this.flushSoon();
  }

  /** Marks `ref` after a failed read, without flushing: {@link DirtyVolumes.retryAfter} does. */
  markFailed(ref: VolumeRef): void {
    if (!this.#stopped) this.#refs.set(refKey(ref), ref);
  }

  retryAfter(ms: number): void {
    clearTimeout(this.#retry);
    this.#retry = setTimeout(() => this.flushSoon(), ms);
  }

  flushSoon(): void {
    if (this.#queued || this.#stopped) return;
    this.#queued = true;
    setImmediate(() =>
      this.flush(() => {
        this.#queued = false;
        const refs = [...this.#refs.values()];
        this.#refs = new Map();
        return refs;
      }),
    );
  }

  stop(): void {
    this.#stopped = true;
    clearTimeout(this.#retry);
  }
}
