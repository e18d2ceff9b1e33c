/**
 * The feed's appends to the event log, one after another in the order they were asked for (the
 * log's order is the order observed), with what each backend still has queued. A holder that must
 * compare its watcher with the log's view (after an append failed, or a failover) waits until its
 * own appends settled: an append still queued behind a slow one (a Cluster slot in migration
 * refuses every append for seconds) is not yet in the view, and the comparison would send its
 * changes a second time.
 */

/** Options of {@link AppendQueue}. */
export interface AppendQueueOptions {
  /** An append of `backend`'s changes failed (after its own retries). */
  onFailed(backend: string, err: unknown): void;
  /** `backend` has no append queued or running any more. */
  onSettled(backend: string): void;
}

export class AppendQueue {
  readonly #o: AppendQueueOptions;
  #chain: Promise<void> = Promise.resolve();
  readonly #queued = new Map<string, number>();
  readonly #settledAt = new Map<string, number>();

  constructor(o: AppendQueueOptions) {
    this.#o = o;
  }

  /** Runs `append` after every append asked for before it. */
  run(backend: string, append: () => Promise<void>): void {
    this.#queued.set(backend, (this.#queued.get(backend) ?? 0) + 1);
    this.#chain = this.#chain
      .then(append)
      .catch((err: unknown) => this.#o.onFailed(backend, err))
      .finally(() => {
        const left = this.#queued.get(backend)! - 1;
        if (left > 0) return void this.#queued.set(backend, left);
        this.#queued.delete(backend);
        this.#settledAt.set(backend, Date.now());
        this.#o.onSettled(backend);
      })
      // A throwing listener must not stop the appends after it (nor leave a rejection unhandled).
      .catch(() => undefined);
  }

  /** Whether an append of `backend`'s changes is queued or running. */
  busy(backend: string): boolean {
    return this.#queued.has(backend);
  }

  /** When `backend`'s last append settled (Unix ms); 0 before any. */
  settledAt(backend: string): number {
    return this.#settledAt.get(backend) ?? 0;
  }

  /** Resolves once every append asked for so far settled. */
  drained(): Promise<void> {
    return this.#chain;
  }
}
