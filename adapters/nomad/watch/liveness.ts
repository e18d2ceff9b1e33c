/**
 * Whether the Nomad event stream is alive (docs/nomad.md "Watching"): no line within the heartbeat
 * allowance means it is dead, and an open breaker of the backend says Nomad stopped answering
 * sooner, whichever comes first. The watcher reports DEGRADED on either, and leaves a breaker's
 * DEGRADED when the stream that held meanwhile speaks again while no breaker is open. A breaker
 * that closes while the stream has said nothing since it opened ends the stream, so the watcher
 * reconnects at once instead of waiting up to a heartbeat interval (30 s) for a line.
 */
import type { Breaker } from '../../contract/breaker';
import { BreakerWatch, type BreakerHandlers } from '../../watch-breakers';

export class StreamLiveness {
  readonly #breakers: BreakerWatch;
  #timer: NodeJS.Timeout | undefined;
  #heardAt = 0;
  #onDead: ((why: string, breakerClosed: boolean) => void) | undefined;

  constructor(
    breakers: readonly Breaker[],
    readonly heartbeatTimeoutMs: number,
  ) {
    this.#breakers = new BreakerWatch(breakers);
  }

  /**
   * `opened` on every opening; `recovered` when a breaker closes after the stream spoke since it
   * opened (else a stream still open is ended as dead, see {@link StreamLiveness.listen}); `closed`
   * on every closing.
   */
  watchBreakers(opened: BreakerHandlers['opened'], recovered: () => void, closed: () => void): void {
    this.#breakers.start({
      opened,
      closed: () => {
        if (this.#heardAt > this.#breakers.openedAt) recovered();
        else this.#onDead?.('the breaker closed but the stream has sent nothing since it opened; reconnecting', true);
        closed();
      },
    });
  }

  /** True while a breaker of the backend is not closed: its calls are refused. */
  get breakerOpen(): boolean {
    return this.#breakers.open;
  }

  stop(): void {
    this.#breakers.stop();
    this.quiet();
  }

  /**
   * Starts the allowance of a newly opened stream; `onDead` runs once it passes without a line,
   * or when a breaker closes while the stream has been silent since it opened (`breakerClosed`).
   */
  listen(onDead: (why: string, breakerClosed: boolean) => void): void {
    this.#onDead = onDead;
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
    this.#onDead = undefined;
  }

  #arm(): void {
    clearTimeout(this.#timer);
    this.#timer = setTimeout(
      () => this.#onDead?.(`no event or heartbeat for ${this.heartbeatTimeoutMs} ms; reconnecting`, false),
      this.heartbeatTimeoutMs,
    );
  }
}
