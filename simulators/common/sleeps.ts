/**
 * Latency injection's sleeps, cancellable all at once so `close()` never waits for a pending
 * delay (a test ending mid-sleep must not keep the process alive).
 */
export class Sleeps {
  readonly #pending = new Set<{ timer: NodeJS.Timeout; resolve: () => void }>();

  /** Resolves after `ms`, or at once when {@link wakeAll} runs first. */
  sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const s = {
        timer: setTimeout(() => {
          this.#pending.delete(s);
          resolve();
        }, ms),
        resolve,
      };
      this.#pending.add(s);
    });
  }

  /** Ends every pending sleep now. */
  wakeAll(): void {
    for (const s of this.#pending) {
      clearTimeout(s.timer);
      s.resolve();
    }
    this.#pending.clear();
  }
}
