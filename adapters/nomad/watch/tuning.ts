/** Tuning of the Nomad watcher (`watcher.ts`, docs/nomad.md "Watching"); every field has a default. */
export interface NomadWatchTuning {
  /**
   * No line (not even a `{}` heartbeat) for this long: the watcher reports DEGRADED and reconnects.
   * @default 45_000 (Nomad beats every 30 s: one lost beat plus half an interval)
   */
  heartbeatTimeoutMs?: number;
  /** Volume reads at once during a sync or a burst of events. @default 8 */
  readConcurrency?: number;
  /** First pause after a failure; doubles up to `maxBackoffMs`. @default 500 */
  backoffMs?: number;
  /** @default 30_000 */
  maxBackoffMs?: number;
  /** Stream failures in a row before falling back to blocking queries. @default 5 */
  streamFailuresBeforeFallback?: number;
  /** `wait` of a blocking list query (fallback). @default 60_000 */
  blockingWaitMs?: number;
  /** In fallback, claimed volumes are read again at most this often (allocation status changes). @default 30_000 */
  claimRefreshMs?: number;
  /** In fallback, the event stream is tried again after this long. @default 300_000 */
  streamRetryMs?: number;
  /** Report the first full read's volumes as created (before: null). @default false */
  reportInitial?: boolean;
}

export function withDefaults(t: NomadWatchTuning): Required<NomadWatchTuning> {
  return {
    heartbeatTimeoutMs: t.heartbeatTimeoutMs ?? 45_000,
    readConcurrency: t.readConcurrency ?? 8,
    backoffMs: t.backoffMs ?? 500,
    maxBackoffMs: t.maxBackoffMs ?? 30_000,
    streamFailuresBeforeFallback: t.streamFailuresBeforeFallback ?? 5,
    blockingWaitMs: t.blockingWaitMs ?? 60_000,
    claimRefreshMs: t.claimRefreshMs ?? 30_000,
    streamRetryMs: t.streamRetryMs ?? 300_000,
    reportInitial: t.reportInitial ?? false,
  };
}

/** A pause that `wake()` (stop) ends early; leaves no timer behind. */
export class Pauses {
  #wakers = new Set<() => void>();

  pause(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const wake = (): void => {
        clearTimeout(timer);
        this.#wakers.delete(wake);
        resolve();
      };
      const timer = setTimeout(wake, ms);
      this.#wakers.add(wake);
    });
  }

  wakeAll(): void {
    for (const w of [...this.#wakers]) w();
  }
}
