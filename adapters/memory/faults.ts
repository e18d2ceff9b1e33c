/**
 * Injected latency and failures, so partial results, deadlines and the circuit breaker can be seen
 * without a cloud. Off by default: reads and writes then answer at once. Every call also takes one
 * unit of the execution's budget and goes through the backend's breaker, as an HTTP call would.
 */
import type { CallOptions } from '../contract/call-options';
import { BackendUnavailableError, GatewayError } from '../contract/errors';
import type { BreakerBoard } from '../contract/breaker';
import { unavailable } from './errors';

/** Injected faults (settings `latencyMs`, `latencyJitterMs`, `failureRate`). */
export interface FaultOptions {
  /** Added to every call, ms. @default 0 */
  latencyMs: number;
  /** Up to this much more, at random, ms. @default 0 */
  latencyJitterMs: number;
  /** Share of calls that fail with BACKEND_UNAVAILABLE, 0–1. @default 0 */
  failureRate: number;
}

export const NO_FAULTS: Readonly<FaultOptions> = Object.freeze({ latencyMs: 0, latencyJitterMs: 0, failureRate: 0 });

/** The breaker's service name: memory has one "endpoint". */
const SERVICE = 'memory';

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const t = setTimeout(() => {
      signal?.removeEventListener('abort', abort);
      resolve();
    }, ms);
    const abort = (): void => {
      clearTimeout(t);
      reject(signal!.reason);
    };
    signal?.addEventListener('abort', abort, { once: true });
  });
}

export class Faults {
  constructor(
    readonly backend: string,
    public options: FaultOptions,
    readonly breakers: BreakerBoard,
    /** For tests: where the dice come from. @default Math.random */
    readonly random: () => number = Math.random,
  ) {}

  /**
   * Runs one call: budget, breaker, injected latency and failure, then `run`. Access denials and
   * other answers the backend gives count as successes for the breaker, as HTTP 4xx do.
   */
  async call<T>(o: Pick<CallOptions, 'budget' | 'signal' | 'probe'>, run: () => T): Promise<T> {
    o.budget?.take(this.backend);
    if (o.signal?.aborted) throw o.signal.reason;
    const breaker = this.breakers.get(this.backend, SERVICE);
    const probe = breaker.admit(o.probe !== undefined);
    try {
      const { latencyMs, latencyJitterMs, failureRate } = this.options;
      const delay = latencyMs + (latencyJitterMs > 0 ? Math.floor(this.random() * latencyJitterMs) : 0);
      if (delay > 0) await sleep(delay, o.signal);
      if (failureRate > 0 && this.random() < failureRate) {
        throw unavailable(
          this.backend,
          `backend "${this.backend}" failed (an injected failure: failureRate ${failureRate})`,
        );
      }
      const result = run();
      breaker.record('success', probe);
      return result;
    } catch (err) {
      const failure = err instanceof BackendUnavailableError || !(err instanceof GatewayError);
      breaker.record(o.signal?.aborted ? 'neutral' : failure ? 'failure' : 'success', probe);
      throw err;
    }
  }
}
