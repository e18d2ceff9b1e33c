/**
 * HTTP transport shared by every backend client: one keep-alive undici pool per backend origin,
 * a deadline on every call, a concurrency cap, and bounded retries for idempotent reads only.
 * It knows nothing about any backend's wire format; `client.ts` of each backend adds auth,
 * body parsing and error mapping.
 */
import { Pool, errors as undiciErrors } from 'undici';
import type { CallBudget } from './budget';
import { BackendTimeoutError, BackendUnavailableError, GatewayError } from './errors';

/** Options of one backend's transport. */
export interface TransportOptions {
  /** Configured backend id, used in errors and call records. */
  backend: string;
  /** Base URL of the backend, e.g. `http://127.0.0.1:4646`. Any path prefix is kept. */
  baseUrl: string;
  /** Deadline of one call, including queueing for a connection and all retries. @default 10_000 */
  timeoutMs?: number;
  /** Most connections (and so concurrent calls) to this backend. @default 16 */
  maxConnections?: number;
  /** Retries of an idempotent read after a connection failure or a 502/503/504. @default 2 */
  readRetries?: number;
  /** Pause before the first retry; doubles each time. @default 50 */
  retryBackoffMs?: number;
  /** Called once per finished call (metrics, logs). Must not throw. */
  onCall?: (record: CallRecord) => void;
}

/** What is recorded of each call: never headers or bodies, so never credentials. */
export interface CallRecord {
  backend: string;
  method: string;
  /** Endpoint template, e.g. `GET /v1/volume/csi/:id`. */
  endpoint: string;
  /** HTTP status, or 0 when no answer came. */
  status: number;
  durationMs: number;
  /** Gateway error code when the call failed at the transport level. */
  failure?: string;
  requestId?: string;
}

export interface HttpRequest {
  method: 'GET' | 'PUT' | 'POST' | 'DELETE' | 'PATCH';
  /** Path below the base URL, already built by the backend's `urls.ts`. */
  path: string;
  query?: URLSearchParams;
  headers?: Record<string, string>;
  body?: string;
  /** Endpoint template for records. */
  endpoint: string;
  signal?: AbortSignal;
  requestId?: string;
  /** Takes one unit per request sent (retries too); throws when spent. @default unlimited */
  budget?: CallBudget;
}

export interface HttpResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
}

const RETRYABLE_STATUS = new Set([502, 503, 504]);

export class Transport {
  readonly backend: string;
  readonly #pool: Pool;
  readonly #prefix: string;
  readonly #timeoutMs: number;
  readonly #readRetries: number;
  readonly #backoffMs: number;
  readonly #onCall?: (r: CallRecord) => void;

  constructor(o: TransportOptions) {
    const url = new URL(o.baseUrl);
    this.backend = o.backend;
    this.#prefix = url.pathname.replace(/\/+$/, '');
    this.#timeoutMs = o.timeoutMs ?? 10_000;
    this.#readRetries = o.readRetries ?? 2;
    this.#backoffMs = o.retryBackoffMs ?? 50;
    this.#onCall = o.onCall;
    this.#pool = new Pool(url.origin, { connections: o.maxConnections ?? 16, keepAliveTimeout: 10_000 });
  }

  /** Sends one request. Resolves with any HTTP answer; rejects only with a typed gateway error. */
  async send(req: HttpRequest): Promise<HttpResponse> {
    const started = performance.now();
    const deadline = AbortSignal.timeout(this.#timeoutMs);
    const signal = req.signal ? AbortSignal.any([req.signal, deadline]) : deadline;
    const idempotent = req.method === 'GET';
    let attempt = 0;
    for (;;) {
      try {
        const res = await this.#once(req, signal);
        if (idempotent && RETRYABLE_STATUS.has(res.status) && attempt < this.#readRetries) {
          attempt++;
          await this.#pause(attempt, signal);
          continue;
        }
        this.#record(req, res.status, started);
        return res;
      } catch (err) {
        const mapped = this.#mapFailure(err, deadline, req);
        if (idempotent && mapped instanceof BackendUnavailableError && attempt < this.#readRetries && !signal.aborted) {
          attempt++;
          try {
            await this.#pause(attempt, signal);
            continue;
          } catch {
            /* deadline passed while pausing: report the timeout below */
          }
        }
        const final = signal.aborted && deadline.aborted ? this.#timeout(req) : mapped;
        this.#record(req, 0, started, final.code);
        throw final;
      }
    }
  }

  async close(): Promise<void> {
    await this.#pool.close();
  }

  async #once(req: HttpRequest, signal: AbortSignal): Promise<HttpResponse> {
    req.budget?.take(this.backend);
    const qs = req.query && [...req.query.keys()].length > 0 ? `?${req.query.toString()}` : '';
    const res = await this.#pool.request({
      method: req.method,
      path: `${this.#prefix}${req.path}${qs}`,
      headers: req.headers,
      body: req.body,
      signal,
    });
    const text = await res.body.text();
    return { status: res.statusCode, headers: res.headers, text };
  }

  #pause(attempt: number, signal: AbortSignal): Promise<void> {
    return new Promise((resolve, reject) => {
      const t = setTimeout(resolve, this.#backoffMs * 2 ** (attempt - 1));
      signal.addEventListener('abort', () => (clearTimeout(t), reject(signal.reason)), { once: true });
    });
  }

  #timeout(req: HttpRequest): GatewayError {
    return new BackendTimeoutError(`backend "${this.backend}" did not answer ${req.endpoint} within ${this.#timeoutMs} ms`, {
      backend: this.backend,
    });
  }

  #mapFailure(err: unknown, deadline: AbortSignal, req: HttpRequest): GatewayError {
    if (err instanceof GatewayError) return err;
    if (deadline.aborted) return this.#timeout(req);
    if (err instanceof undiciErrors.RequestAbortedError || (err instanceof Error && err.name === 'AbortError')) {
      // The caller went away; not the backend's fault, but the call did not complete.
      return new BackendUnavailableError(`call to backend "${this.backend}" was cancelled`, { backend: this.backend, retryable: false, cause: err });
    }
    const code = (err as { code?: string } | undefined)?.code ?? 'unknown error';
    return new BackendUnavailableError(`backend "${this.backend}" is unreachable (${code})`, { backend: this.backend, cause: err });
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
