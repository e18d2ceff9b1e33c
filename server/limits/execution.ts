/**
 * What one execution may still use: its backend-call budget, its deadline (an AbortSignal that
 * also fires when the client goes away) and its response-size meter. One per execution, in the
 * execution context, so any executor or transport that builds the context gets them.
 */
import { CallBudget } from '../../adapters/budget';
import { GatewayError, OperationTimeoutError } from '../../adapters/errors';
import type { LimitsConfig } from './config';
import { OperationCancelledError, ResponseTooLargeError } from './errors';

export class ExecutionLimits {
  /** Backend calls per backend; travels in every call's options. */
  readonly budget: CallBudget;
  /** Aborts at the deadline (reason: OperationTimeoutError) or when the client goes away. */
  readonly signal: AbortSignal;
  /** Estimated JSON bytes of the data resolved so far. */
  bytes = 0;
  /** Set once the operation must stop: every field after it short-circuits. */
  stop: GatewayError | undefined;
  /** Whether the stop was already reported on a nullable field (later ones are nulled quietly). */
  reported = false;
  /** Fields resolved so far (the wrapper checks the clock every few hundred). */
  fields = 0;
  readonly maxBytes: number;
  readonly #deadlineAt: number;
  readonly #deadline = new AbortController();
  readonly #timeoutMs: number;
  readonly #timer: NodeJS.Timeout;

  constructor(c: Pick<LimitsConfig, 'maxBackendCallsPerOperation' | 'operationTimeoutMs' | 'maxResponseBytes'>, clientSignal?: AbortSignal) {
    this.budget = new CallBudget(c.maxBackendCallsPerOperation);
    this.maxBytes = c.maxResponseBytes;
    this.#timeoutMs = c.operationTimeoutMs;
    this.#deadlineAt = Date.now() + c.operationTimeoutMs;
    this.#timer = setTimeout(() => this.#expire(), c.operationTimeoutMs);
    this.#timer.unref();
    this.signal = clientSignal ? AbortSignal.any([clientSignal, this.#deadline.signal]) : this.#deadline.signal;
    if (this.signal.aborted) this.#onAbort();
    else this.signal.addEventListener('abort', this.#onAbort, { once: true });
  }

  readonly #onAbort = (): void => {
    const reason: unknown = this.signal.reason;
    this.stop ??= reason instanceof GatewayError ? reason : new OperationCancelledError();
  };

  /**
   * True once the deadline has passed. Timers do not fire while execution keeps the event loop
   * busy (synchronous or microtask-only work), so the field wrapper asks the clock as well.
   */
  overdue(): boolean {
    if (Date.now() < this.#deadlineAt) return false;
    this.#expire();
    return true;
  }

  #expire(): void {
    if (!this.#deadline.signal.aborted) this.#deadline.abort(new OperationTimeoutError(this.#timeoutMs));
  }

  /** Adds `n` estimated bytes; past the cap the operation stops. */
  add(n: number): void {
    this.bytes += n;
    if (this.bytes > this.maxBytes && this.stop === undefined) this.stop = new ResponseTooLargeError(this.maxBytes);
  }

  /**
   * The execution is over: the deadline timer goes (it would only abort an idle signal), and so
   * does the abort listener. Node keeps a composite signal (`AbortSignal.any`) that has an abort
   * listener alive until it aborts, and a client's signal that never aborts would keep these limits
   * and everything they reach alive for good (~3 KiB per execution on Node 20).
   */
  end(): void {
    clearTimeout(this.#timer);
    this.signal.removeEventListener('abort', this.#onAbort);
  }
}

/** A context that carries execution limits (GatewayContext does). */
export interface LimitedContext {
  limits?: ExecutionLimits;
}
