/**
 * HTTP transport shared by every backend client: one keep-alive undici pool per backend origin,
 * a deadline on every call, a concurrency cap, and bounded retries for idempotent reads only.
 * It knows nothing about any backend's wire format; `client.ts` of each backend adds auth,
 * body parsing and error mapping.
 *
 * It must not hang whatever undici does (issue 9): every call is settled by its own timer, not
 * by undici honouring an AbortSignal, and a pool that stops serving is replaced (`pool.ts`).
 */
import { linkedAbort } from '../contract/linked-abort';
import { errors as undiciErrors } from 'undici';
import type { Breaker, CallOutcome } from '../contract/breaker';
import type { CallBudget } from '../contract/budget';
import type { ProbeCall } from '../contract/call-options';
import { BackendTimeoutError, BackendUnavailableError, ErrorCode, GatewayError } from '../contract/errors';
import { checkOutgoing } from './headers';
import { PoolKeeper, type CallState } from './pool';
import { startClientSpan } from './tracing';
import { COMMON_BACKEND_DEFAULTS, type CallRecord } from '../contract/module';

/** Options of one backend's transport. */
export interface TransportOptions {
  /** Configured backend id, used in errors and call records. */
  backend: string;
  /** Base URL of the backend, e.g. `http://127.0.0.1:4646`. Any path prefix is kept. */
  baseUrl: string;
  /** Deadline of one call, including queueing for a connection and all retries. @default {@link COMMON_BACKEND_DEFAULTS} (10000) */
  timeoutMs?: number;
  /** Most connections (and so concurrent calls) to this backend. @default 16 */
  maxConnections?: number;
  /** Retries of an idempotent read after a connection failure or a 502/503/504. @default 2 */
  readRetries?: number;
  /** Pause before the first retry; doubles each time. @default 50 */
  retryBackoffMs?: number;
  /**
   * What a request already on the wire does when its caller's signal aborts (the client hung
   * up, or the operation's deadline passed). The caller is answered at once either way, and
   * calls not yet sent are dropped.
   * - `finish`: the request completes in the background (within its own deadline) and its
   *   connection goes back to the pool warm.
   * - `abort`: the request is cancelled, which on HTTP/1.1 means destroying its connection.
   * `bench/abandon.ts` measures both (bench/ABANDON.md): over 30 abandoned list-with-attachments
   * queries, `finish` opened no new connection and `abort` 16 per query, for the same backend
   * requests. `finish` is the default because a request on the wire costs the backend the same
   * either way, while cutting it costs a new TCP (and TLS) connection, and a write is never cut
   * half-way. This is a measurement switch, not a deployment setting.
   * @default 'finish'
   */
  inFlightOnAbort?: 'finish' | 'abort';
  /** Called once per finished call (metrics, logs). Must not throw. */
  onCall?: (record: CallRecord) => void;
  /** The service's circuit breaker (`breaker.ts`) every call goes through unless the request names its own. @default none */
  breaker?: Breaker;
}

export interface HttpRequest {
  method: 'GET' | 'PUT' | 'POST' | 'DELETE' | 'PATCH';
  /** Path below the base URL, already built by the backend's `urls.ts`. */
  path: string;
  query?: URLSearchParams;
  /** Checked before sending (`headers.ts`): a value that is not printable Latin-1 is BAD_USER_INPUT. */
  headers?: Record<string, string>;
  body?: string;
  /** Endpoint template for records. */
  endpoint: string;
  /**
   * The caller's signal (request abandoned, operation deadline). Once aborted nothing more is
   * sent; a {@link GatewayError} reason is what the call fails with.
   */
  signal?: AbortSignal;
  requestId?: string;
  /** Takes one unit per request sent (retries too); throws when spent. @default unlimited */
  budget?: CallBudget;
  /** The breaker of the service this request goes to (OpenStack: Keystone, Cinder or Nova). @default the transport's */
  breaker?: Breaker;
  /** The background probe's request: it may pass a breaker that is not closed, within its own deadline. @default a caller's */
  probe?: ProbeCall;
}

export interface HttpResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
}

const RETRYABLE_STATUS = new Set([502, 503, 504]);

export class Transport {
  readonly backend: string;
  readonly #pools: PoolKeeper;
  readonly #prefix: string;
  readonly #timeoutMs: number;
  readonly #readRetries: number;
  readonly #backoffMs: number;
  readonly #abortInFlight: boolean;
  readonly #onCall?: (r: CallRecord) => void;
  readonly #breaker?: Breaker;
  /** The backend's origin, for the spans' `server.address` and `server.port`. */
  readonly #url: URL;

  constructor(o: TransportOptions) {
    const url = new URL(o.baseUrl);
    this.#url = url;
    this.backend = o.backend;
    this.#prefix = url.pathname.replace(/\/+$/, '');
    this.#timeoutMs = o.timeoutMs ?? COMMON_BACKEND_DEFAULTS.timeoutMs;
    this.#readRetries = o.readRetries ?? COMMON_BACKEND_DEFAULTS.readRetries;
    this.#backoffMs = o.retryBackoffMs ?? 50;
    this.#abortInFlight = o.inFlightOnAbort === 'abort';
    this.#onCall = o.onCall;
    this.#breaker = o.breaker;
    this.#pools = new PoolKeeper(
      url.origin,
      o.maxConnections ?? COMMON_BACKEND_DEFAULTS.maxConnections,
      this.#timeoutMs,
    );
  }

  /**
   * Sends one request. Resolves with any HTTP answer; rejects only with a typed gateway error,
   * at the latest when the deadline passes, whether or not undici ever settles.
   */
  send(req: HttpRequest): Promise<HttpResponse> {
    const path = `${this.#prefix}${req.path}${req.query && [...req.query.keys()].length > 0 ? `?${req.query.toString()}` : ''}`;
    try {
      checkOutgoing(this.backend, path, req.headers);
    } catch (err) {
      return Promise.reject(err);
    }
    const caller = req.signal;
    // Never sent, so not recorded: undici would still open a connection for it.
    if (caller?.aborted) return Promise.reject(this.#cancelled(caller));
    // A CLIENT span per call (a no-op without an SDK); the backend gets its `traceparent`.
    const span = startClientSpan(
      { backend: this.backend, method: req.method, endpoint: req.endpoint, url: this.#url },
      req.headers,
    );
    const sent = span.headers === req.headers ? req : { ...req, headers: span.headers };
    // An open breaker answers at once, without a connection or a unit of the budget.
    const breaker = req.breaker ?? this.#breaker;
    let probe = false;
    try {
      probe = breaker?.admit(req.probe !== undefined) ?? false;
    } catch (err) {
      span.end(0, err instanceof GatewayError ? err.code : 'unknown', true);
      return Promise.reject(err);
    }
    // The breaker learns how the exchange really ended, once, also when the caller left earlier.
    let judged = false;
    const judge = (outcome: CallOutcome): void => {
      if (judged) return;
      judged = true;
      breaker?.record(outcome, probe);
    };
    const started = performance.now();
    const timeoutMs = Math.min(req.probe?.timeoutMs ?? Infinity, this.#timeoutMs);
    const deadline = new AbortController();
    // What stops new attempts and retry pauses: the caller or the deadline (the timer aborts both).
    const link = caller ? linkedAbort(caller) : undefined;
    const stop = link ? link.signal : deadline.signal;
    // What cancels a request on the wire: with `finish`, the deadline only.
    const wire = this.#abortInFlight ? stop : deadline.signal;
    const state: CallState = { settled: false };
    let recorded = false;
    const record = (status: number, failure?: string): void => {
      if (recorded) return;
      recorded = true;
      this.#record(req, status, started, failure);
      span.end(status, failure);
    };
    return new Promise<HttpResponse>((resolve, reject) => {
      let settled = false;
      const settle = (fn: () => void): void => {
        if (settled) return;
        settled = true;
        stop.removeEventListener('abort', onCallerAbort);
        fn();
      };
      // The deadline settles the call itself: undici may never settle a request it lost. It runs
      // until the exchange ends, also when the caller was answered earlier.
      const timer = setTimeout(() => {
        const err = this.#timeout(req, timeoutMs);
        deadline.abort(err);
        link?.controller.abort(err);
        record(0, err.code);
        judge('failure');
        settle(() => reject(err));
        this.#pools.afterDeadline(state);
      }, timeoutMs);
      // The caller is answered at once; the exchange itself ends as `inFlightOnAbort` says, and
      // is recorded with what it really got when it ends.
      // Listening on the per-call `stop`, not on the caller's signal shared by every call.
      const onCallerAbort = (): void => {
        if (caller?.aborted) settle(() => reject(this.#cancelled(caller)));
      };
      stop.addEventListener('abort', onCallerAbort, { once: true });
      this.#attempts(sent, path, wire, stop, state).then(
        (res) => {
          clearTimeout(timer);
          link?.unlink();
          record(res.status);
          judge(res.status >= 500 ? 'failure' : 'success');
          settle(() => resolve(res));
        },
        (err: unknown) => {
          clearTimeout(timer);
          link?.unlink();
          const mapped = this.#mapFailure(err, deadline.signal, caller, req);
          // Only calls that reached undici are backend calls (not a spent budget, say).
          if (state.pool) record(0, mapped.code);
          else span.end(0, mapped.code);
          judge(this.#outcomeOf(err, mapped, deadline.signal, caller, state));
          settle(() => reject(mapped));
        },
      );
    });
  }

  /** Stops the pools: in-flight requests get a short while to end, then connections are cut. */
  close(): Promise<void> {
    return this.#pools.close();
  }

  async #attempts(
    req: HttpRequest,
    path: string,
    wire: AbortSignal,
    stop: AbortSignal,
    state: CallState,
  ): Promise<HttpResponse> {
    const idempotent = req.method === 'GET';
    for (let attempt = 0; ; attempt++) {
      // Calls not yet sent are dropped once the caller is gone or the deadline passed.
      if (stop.aborted) throw stop.reason;
      try {
        const res = await this.#once(req, path, wire, stop, state);
        if (idempotent && RETRYABLE_STATUS.has(res.status) && attempt < this.#readRetries) {
          await this.#pause(attempt + 1, stop);
          continue;
        }
        return res;
      } catch (err) {
        if (!(idempotent && attempt < this.#readRetries && !stop.aborted && this.#isConnectionFailure(err))) throw err;
        await this.#pause(attempt + 1, stop);
      }
    }
  }

  async #once(
    req: HttpRequest,
    path: string,
    wire: AbortSignal,
    stop: AbortSignal,
    state: CallState,
  ): Promise<HttpResponse> {
    // The budget counts requests sent: taken once a connection slot is ours.
    return this.#pools.exchange(
      { method: req.method, path, headers: req.headers, body: req.body, signal: wire },
      state,
      stop,
      () => req.budget?.take(this.backend),
    );
  }

  /**
   * What a failed exchange tells the breaker: a timeout or a connection failure is the backend's;
   * a call the caller abandoned, one never sent (a spent budget) or one undici refused is not.
   */
  #outcomeOf(
    err: unknown,
    mapped: GatewayError,
    deadline: AbortSignal,
    caller: AbortSignal | undefined,
    state: CallState,
  ): CallOutcome {
    if (deadline.aborted) return 'failure';
    if (caller?.aborted || !state.pool) return 'neutral';
    return this.#isConnectionFailure(err) && mapped.code === ErrorCode.BackendUnavailable ? 'failure' : 'neutral';
  }

  #isConnectionFailure(err: unknown): boolean {
    return !(err instanceof GatewayError) && !isAbort(err) && !isRefusedByUndici(err);
  }

  #pause(attempt: number, signal: AbortSignal): Promise<void> {
    return new Promise((resolve, reject) => {
      if (signal.aborted) return reject(signal.reason);
      const onAbort = (): void => (clearTimeout(t), reject(signal.reason));
      const t = setTimeout(
        () => (signal.removeEventListener('abort', onAbort), resolve()),
        this.#backoffMs * 2 ** (attempt - 1),
      );
      signal.addEventListener('abort', onAbort, { once: true });
    });
  }

  #timeout(req: HttpRequest, ms = this.#timeoutMs): GatewayError {
    return new BackendTimeoutError(`backend "${this.backend}" did not answer ${req.endpoint} within ${ms} ms`, {
      backend: this.backend,
    });
  }

  /** The caller's reason when it is a gateway error (e.g. the operation's deadline), else "cancelled". */
  #cancelled(caller: AbortSignal | undefined): GatewayError {
    if (caller?.reason instanceof GatewayError) return caller.reason;
    // The caller went away; not the backend's fault, but the call did not complete.
    return new BackendUnavailableError(`call to backend "${this.backend}" was cancelled`, {
      backend: this.backend,
      retryable: false,
      cause: caller?.reason,
    });
  }

  #mapFailure(err: unknown, deadline: AbortSignal, caller: AbortSignal | undefined, req: HttpRequest): GatewayError {
    if (deadline.aborted) return deadline.reason instanceof GatewayError ? deadline.reason : this.#timeout(req);
    if (caller?.aborted) return this.#cancelled(caller);
    if (err instanceof GatewayError) return err;
    if (isRefusedByUndici(err)) {
      // Cannot happen after checkOutgoing; if it does, undici kept the slot: retire the pool.
      this.#pools.retire();
      return new GatewayError(ErrorCode.Internal, `refused to send a request to backend "${this.backend}"`, {
        backend: this.backend,
        cause: err,
      });
    }
    if (isAbort(err)) return this.#cancelled(caller);
    const code = (err as { code?: string } | undefined)?.code ?? 'unknown error';
    return new BackendUnavailableError(`backend "${this.backend}" is unreachable (${code})`, {
      backend: this.backend,
      cause: err,
    });
  }

  #record(req: HttpRequest, status: number, started: number, failure?: string): void {
    this.#onCall?.({
      backend: this.backend,
      method: req.method,
      endpoint: req.endpoint,
      status,
      durationMs: performance.now() - started,
      failure,
      requestId: req.requestId,
    });
  }
}

function isAbort(err: unknown): boolean {
  return err instanceof undiciErrors.RequestAbortedError || (err instanceof Error && err.name === 'AbortError');
}

/** undici refused to build the request (bad header, path, method, body): it leaks the pool slot. */
function isRefusedByUndici(err: unknown): boolean {
  return err instanceof undiciErrors.InvalidArgumentError || err instanceof undiciErrors.NotSupportedError;
}
