/**
 * Watches this process while the in-process gateway is fuzzed: unhandled rejections and uncaught
 * exceptions (recorded instead of killing the run, so the case that caused them is reported and
 * shrunk), and peak RSS sampled every 50 ms.
 */
export class ProcessWatch {
  readonly rssLimitBytes: number;
  #errors: Array<{ kind: 'unhandled-rejection' | 'crash'; message: string }> = [];
  #maxRss = 0;
  readonly #timer: NodeJS.Timeout;
  readonly #onRejection = (reason: unknown): void => {
    this.#errors.push({ kind: 'unhandled-rejection', message: describe(reason) });
  };
  readonly #onException = (err: unknown): void => {
    this.#errors.push({ kind: 'crash', message: `uncaught exception: ${describe(err)}` });
  };

  /** The RSS bound is the lower of `ceilingBytes` and the RSS now plus `headroomBytes`. */
  constructor(ceilingBytes: number, headroomBytes: number) {
    this.rssLimitBytes = Math.min(ceilingBytes, process.memoryUsage().rss + headroomBytes);
    process.on('unhandledRejection', this.#onRejection);
    process.on('uncaughtException', this.#onException);
    this.#timer = setInterval(() => this.#sample(), 50);
    this.#timer.unref();
  }

  #sample(): void {
    this.#maxRss = Math.max(this.#maxRss, process.memoryUsage().rss);
  }

  /** Starts a new peak; returns the RSS now. */
  startPeak(): number {
    this.#maxRss = process.memoryUsage().rss;
    return this.#maxRss;
  }

  /** Peak RSS since {@link startPeak}. */
  peakRss(): number {
    this.#sample();
    return this.#maxRss;
  }

  takeErrors(): Array<{ kind: 'unhandled-rejection' | 'crash'; message: string }> {
    const e = this.#errors;
    this.#errors = [];
    return e;
  }

  stop(): void {
    clearInterval(this.#timer);
    process.off('unhandledRejection', this.#onRejection);
    process.off('uncaughtException', this.#onException);
  }
}

function describe(x: unknown): string {
  return x instanceof Error
    ? `${x.name}: ${x.message}\n${(x.stack ?? '').split('\n').slice(1, 6).join('\n')}`
    : String(x);
}
