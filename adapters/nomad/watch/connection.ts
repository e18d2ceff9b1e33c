/**
 * The watcher's own connections to one Nomad: the event stream and blocking queries hold a
 * request open for minutes, so they get a small undici pool of their own instead of a slot of the
 * backend's pool (`adapters/http/pool.ts`) that callers' reads need. Requests go out with the same
 * headers and error mapping as every Nomad call (`client.ts`); the endpoint is recorded like the
 * transport records calls (never headers or bodies).
 */
import { Pool, type Dispatcher } from 'undici';
import type { CallOptions } from '../../contract/call-options';
import { BackendUnavailableError, ErrorCode, GatewayError } from '../../contract/errors';
import { checkOutgoing } from '../../http/headers';
import type { CallRecord } from '../../contract/module';
import { nomadHeaders, parseNomadJson, queryMeta, type NomadCall, type NomadResult } from '../client';
import { errorFromResponse } from '../errors';
import { eventStreamCall } from './requests';

/** What opening the event stream came to: the stream (maybe with fewer topics, `note` says why), or why to fall back to blocking queries. */
export type EventStreamOpening =
  { lines: AsyncIterable<string>; topics: readonly string[]; note: string | null } | { fallback: string };

/** Options of a {@link WatchConnection}. */
export interface WatchConnectionOptions {
  backend: string;
  baseUrl: string;
  /** Longest wait for the answer's headers (the stream's first byte). @default 30_000 */
  headersTimeoutMs?: number;
  /** Longest ndjson line accepted; a longer one ends the stream as broken. @default 64 MiB */
  maxLineBytes?: number;
  onCall?: (record: CallRecord) => void;
}

/** An open ndjson stream: its lines as they arrive; ends when the server ends it or `signal` aborts. */
export interface LineStream {
  lines: AsyncIterable<string>;
}

export class WatchConnection {
  readonly #pool: Pool;
  readonly #backend: string;
  readonly #prefix: string;
  readonly #headersTimeoutMs: number;
  readonly #maxLine: number;
  readonly #onCall?: (r: CallRecord) => void;

  constructor(o: WatchConnectionOptions) {
    const url = new URL(o.baseUrl);
    this.#backend = o.backend;
    this.#prefix = url.pathname.replace(/\/+$/, '');
    this.#headersTimeoutMs = o.headersTimeoutMs ?? 30_000;
    this.#maxLine = o.maxLineBytes ?? 64 * 1024 * 1024;
    this.#onCall = o.onCall;
    // Two connections: a stream and the blocking query that replaces it never run long together.
    this.#pool = new Pool(url.origin, { connections: 2, bodyTimeout: 0, headersTimeout: this.#headersTimeoutMs });
  }

  /** Opens `c` as an ndjson stream. A non-200 answer is read and thrown as a typed error. */
  async stream(c: NomadCall, o: CallOptions & { signal: AbortSignal }): Promise<LineStream> {
    const res = await this.#send(c, o, this.#headersTimeoutMs);
    const maxLine = this.#maxLine;
    const body = res.body;
    async function* lines(): AsyncGenerator<string> {
      let buf = '';
      try {
        body.setEncoding('utf8');
        for await (const chunk of body as AsyncIterable<string>) {
          buf += chunk;
          let nl: number;
          while ((nl = buf.indexOf('\n')) >= 0) {
            const line = buf.slice(0, nl).trim();
            buf = buf.slice(nl + 1);
            if (line !== '') yield line;
          }
          if (buf.length > maxLine) throw new Error('event stream line too long');
        }
      } finally {
        body.destroy();
      }
    }
    return { lines: lines() };
  }

  /**
   * Opens the event stream on `topics` from `index`. A 403 with several topics is tried again with
   * `CSIVolume` alone (the token may not read allocations); a 404/405/400 (an older Nomad) or a 403
   * even then means falling back to blocking queries. Other failures throw.
   */
  async openEvents(
    topics: readonly string[],
    index: number,
    o: CallOptions & { signal: AbortSignal },
  ): Promise<EventStreamOpening> {
    let note: string | null = null;
    for (;;) {
      try {
        return { ...(await this.stream(eventStreamCall(topics, index), o)), topics, note };
      } catch (err) {
        const status = err instanceof GatewayError ? err.httpStatus : undefined;
        const forbidden = status === 403 && err instanceof GatewayError && err.code === ErrorCode.Forbidden;
        if (forbidden && topics.length > 1) {
          topics = ['CSIVolume'];
          note =
            'the service token may not read allocations (read-job): allocation status changes show with the next volume write';
          continue;
        }
        if (status === 404 || status === 405 || status === 400 || forbidden)
          return { fallback: `event stream unavailable (HTTP ${status}); following blocking queries` };
        throw err;
      }
    }
  }

  /** One long GET (a blocking query): at most `timeoutMs`, body read and parsed like `NomadClient.call`. */
  async get<T>(c: NomadCall, o: CallOptions & { signal: AbortSignal }, timeoutMs: number): Promise<NomadResult<T>> {
    const ms = Math.ceil(timeoutMs);
    const res = await this.#send(c, { ...o, signal: AbortSignal.any([o.signal, AbortSignal.timeout(ms)]) }, ms);
    const text = await res.body.text();
    return { data: text.length === 0 ? undefined : (parseNomadJson(text) as T), meta: queryMeta(res.headers) };
  }

  close(): Promise<void> {
    return this.#pool.destroy();
  }

  async #send(
    c: NomadCall,
    o: CallOptions & { signal: AbortSignal },
    headersTimeout: number,
  ): Promise<Dispatcher.ResponseData> {
    const path = `${this.#prefix}${c.path}${c.query ? `?${c.query.toString()}` : ''}`;
    const headers = nomadHeaders(c, o);
    checkOutgoing(this.#backend, path, headers);
    const started = performance.now();
    let status = 0;
    try {
      const res = await this.#pool.request({
        method: c.method,
        path,
        headers,
        signal: o.signal,
        headersTimeout,
        bodyTimeout: 0,
      });
      status = res.statusCode;
      if (status !== 200) {
        const text = await res.body.text().catch(() => '');
        throw errorFromResponse(status, text, {
          backend: this.#backend,
          action: c.action,
          hadToken: Boolean(o.credential.token),
        });
      }
      return res;
    } catch (err) {
      if (err instanceof GatewayError) throw err;
      throw new BackendUnavailableError(`backend "${this.#backend}" could not be reached while ${c.action}`, {
        backend: this.#backend,
        retryable: true,
        cause: err,
      });
    } finally {
      this.#onCall?.({
        backend: this.#backend,
        method: c.method,
        endpoint: c.endpoint,
        status,
        durationMs: performance.now() - started,
      });
    }
  }
}
