/**
 * Which source the Nomad watcher follows (docs/nomad.md "Watching"): the event stream, or blocking
 * queries after the stream was refused or failed too often in a row, until the stream is tried
 * again (`streamRetryMs` later, or at once when a breaker of the backend closes).
 */
import type { WatchSource } from '../../contract/watch';

/**
 * How a stream connection or a run of blocking queries ended: `refused` by an open breaker,
 * `reconnect` when a breaker closed on a stream silent since it opened (neither is the stream's failure).
 */
export type Outcome = 'failed' | 'fallback' | 'timeup' | 'stopped' | 'refused' | 'reconnect';

export class SourceChoice {
  source: WatchSource = 'EVENT_STREAM';
  /** Failures in a row of the current source. */
  failures = 0;
  /** On blocking queries: when the event stream is tried again (ms since epoch). */
  streamAgainAt = 0;
  /** The blocking query under way, aborted to go back to the stream at once. */
  #round: AbortController | null = null;

  constructor(readonly streamRetryMs: number) {}

  /** Whether the next round follows the stream (also the retry from blocking queries). */
  get streamNext(): boolean {
    return this.source === 'EVENT_STREAM' || Date.now() >= this.streamAgainAt;
  }

  /** Blocking queries from now until the stream's retry. */
  fallback(): void {
    this.source = 'BLOCKING_QUERY';
    this.failures = 0;
    this.streamAgainAt = Date.now() + this.streamRetryMs;
  }

  /** A run of blocking queries begins: its signal aborts when {@link SourceChoice.streamNow} is called. */
  beginRound(): AbortController {
    this.#round = new AbortController();
    return this.#round;
  }

  endRound(round: AbortController): void {
    if (this.#round === round) this.#round = null;
  }

  /** Nomad answers again (a breaker closed): a watcher on blocking queries tries the stream now. */
  streamNow(): void {
    if (this.source !== 'BLOCKING_QUERY') return;
    this.streamAgainAt = 0;
    this.#round?.abort();
  }
}
