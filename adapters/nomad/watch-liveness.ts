/**
 * Whether the Nomad event stream is alive (docs/nomad.md "Watching"): no line within the heartbeat
 * allowance means it is dead, and an open breaker of the backend says Nomad stopped answering
 * sooner, whichever comes first. The watcher reports DEGRADED on either, and leaves a breaker's
 * DEGRADED when the stream that held meanwhile speaks again while no breaker is open.
 */
import type { Breaker } from '../breaker';
import { BreakerWatch, type BreakerHandlers } from '../watch-breakers';

export class StreamLiveness {
  readonly #breakers: BreakerWatch;
  #timer: NodeJS.Timeout | undefined;
  #heardAt = 0;
  #onSilent: () => void = () => undefined;

  constructor(
    breakers: readonly Breaker[],
    readonly heartbeatTimeoutMs: number,
  ) {
    this.#breakers = new BreakerWatch(breakers);
  }

  /** `opened` on every opening; `recovered` when a breaker closes after the stream spoke since it opened. */
  watchBreakers(opened: BreakerHandlers['opened'], recovered: () => void): void {
    this.#breakers.start({ opened, closed: () => void (this.#heardAt > this.#breakers.openedAt && recovered()) });
  }

  stop(): void {
    this.#breakers.stop();
    this.quiet();
  }

  /** Starts the allowance of a newly opened stream; `onSilent` runs once it passes without a line. */
  listen(onSilent: () => void): void {
    this.#onSilent = onSilent;
    this.#arm();
  }

  /** A line arrived: the allowance starts again. True when a breaker's DEGRADED may end (none is open). */
  heard(): boolean {
    this.#heardAt = Date.now();
    this.#arm();
    return !this.#breakers.open;
  }

  /** The stream ended: no allowance runs. */
  quiet(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  #arm(): void {
    clearTimeout(this.#timer);
    this.#timer = setTimeout(() => this.#onSilent(), this.heartbeatTimeoutMs);
  }
}
