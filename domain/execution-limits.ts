/**
 * What one execution may still use: its backend-call budget, its deadline (an AbortSignal that
 * also fires when the client goes away) and its response-size meter. One per execution, in the
 * execution context, so any executor or transport that builds the context gets them.
 */
import { CallBudget } from '../adapters/contract/budget';
import { ErrorCode, GatewayError, OperationTimeoutError } from '../adapters/contract/errors';

/** What one execution may use; the gateway's `limits` settings (server/limits/config.ts) give the values. */
export interface ExecutionLimitsConfig {
  /** Most HTTP calls the execution may send to each backend (retries count). */
  maxBackendCallsPerOperation: number;
  /** Deadline of the execution, in ms. */
  operationTimeoutMs: number;
  /** Largest answer, estimated while executing (JSON bytes of the data). */
  maxResponseBytes: number;
}

/** The answer grew past `maxResponseBytes` while executing; the rest was not resolved. */
export class ResponseTooLargeError extends GatewayError {
  constructor(readonly max: number) {
    super(
      ErrorCode.ResponseTooLarge,
      `the response would exceed ${max} bytes; the rest of it was not resolved: ask for fewer items or fields`,
    );
  }

  override toExtensions(): Record<string, unknown> {
    return { ...super.toExtensions(), limit: 'maxResponseBytes', max: this.max };
  }
}

/** The client went away: the rest of the operation is skipped (nobody reads this answer). */
export class OperationCancelledError extends GatewayError {
  constructor() {
    super(ErrorCode.OperationCancelled, 'the client closed the request; the operation was stopped');
  }
}

export class ExecutionLimits {
  /** Backend calls per backend; travels in every call's options. */
  readonly budget: CallBudget;
  /** Aborts at the deadline (reason: OperationTimeoutError) or when the client goes away (reason: OperationCancelledError). */
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
  /** Aborts `signal`, always with a GatewayError: a call cut short is never blamed on its backend. */
  readonly #stopper = new AbortController();
  readonly #client: AbortSignal | undefined;
  readonly #timeoutMs: number;
  readonly #timer: NodeJS.Timeout;

  /**
   * @param clientSignal aborts the execution when the client goes away. @default none
   * @param budget the backend-call budget, when it is not the execution's own (a subscription
   *   event's reads share one per credential, subscriptions/live/event-reads.ts). @default a budget
   *   of `maxBackendCallsPerOperation` calls per backend
   */
  constructor(c: ExecutionLimitsConfig, clientSignal?: AbortSignal, budget?: CallBudget) {
    this.budget = budget ?? new CallBudget(c.maxBackendCallsPerOperation);
    this.maxBytes = c.maxResponseBytes;
    this.#timeoutMs = c.operationTimeoutMs;
    this.#deadlineAt = Date.now() + c.operationTimeoutMs;
    this.#timer = setTimeout(() => this.#expire(), c.operationTimeoutMs);
    this.#timer.unref();
    this.signal = this.#stopper.signal;
    this.signal.addEventListener('abort', this.#onAbort, { once: true });
    // The client's own reason is a bare AbortError: passed on, the transport would report the
    // calls it cut as BACKEND_UNAVAILABLE although the backend was fine (issue 17, item 13).
    this.#client = clientSignal;
    if (clientSignal?.aborted) this.#cancel();
    else clientSignal?.addEventListener('abort', this.#cancel, { once: true });
  }

  /** True once the client went away (closed its connection or socket), whatever stopped the operation first. */
  get clientGone(): boolean {
    return this.#client?.aborted === true;
  }

  readonly #onAbort = (): void => {
    const reason: unknown = this.signal.reason;
    this.stop ??= reason instanceof GatewayError ? reason : new OperationCancelledError();
  };

  readonly #cancel = (): void => {
    if (!this.#stopper.signal.aborted) this.#stopper.abort(new OperationCancelledError());
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
    if (!this.#stopper.signal.aborted) this.#stopper.abort(new OperationTimeoutError(this.#timeoutMs));
  }

  /** Adds `n` estimated bytes; past the cap the operation stops. */
  add(n: number): void {
    this.bytes += n;
    if (this.bytes > this.maxBytes && this.stop === undefined) this.stop = new ResponseTooLargeError(this.maxBytes);
  }

  /**
   * The execution is over: the deadline timer goes (it would only abort an idle signal), and so
   * does the abort listener. The client's signal stays linked (a backend call still in flight is
   * cancelled when the client goes); it holds these limits only as long as the client's own
   * controller lives, unlike the composite `AbortSignal.any` used before, which Node keeps alive
   * while it has a listener (~3 KiB per execution on Node 20).
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
