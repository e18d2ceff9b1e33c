/**
 * A minimal HTTP/1.1 client over a raw TCP socket. fetch and node:http refuse to send header
 * values with control characters or non-Latin-1 text; an attacker's client does not, so the
 * fuzzer writes the bytes itself. Every exchange is bounded: a deadline (a hang is a finding,
 * not a stuck test) and a cap on the bytes read (a huge response is a finding, not an OOM here).
 */
import { connect } from 'node:net';

/** One request as the fuzzer sends it. Header values are written as UTF-8 bytes, unchecked. */
export interface RawRequest {
  method: string;
  /** Path and query, e.g. `/graphql?query=…`. Sent verbatim. */
  target: string;
  headers: Array<[string, string]>;
  body?: string;
}

export interface RawResponse {
  status: number;
  headers: Record<string, string>;
  /** The body as text (dechunked). */
  text: string;
  bytes: number;
}

/** How an exchange ended when it got no complete answer. */
export type TransportFailure =
  { kind: 'timeout'; afterMs: number } | { kind: 'oversized'; bytes: number } | { kind: 'no-answer'; message: string };

export interface ExchangeResult {
  response?: RawResponse;
  failure?: TransportFailure;
  durationMs: number;
}

export interface ClientLimits {
  /** Deadline of one exchange. @default 20000 */
  timeoutMs: number;
  /** Most response bytes read before giving up. @default 20 MiB */
  maxResponseBytes: number;
}

export const DEFAULT_CLIENT_LIMITS: ClientLimits = { timeoutMs: 20_000, maxResponseBytes: 20 * 1024 * 1024 };

/** Sends `req` to `origin` on a fresh connection (`Connection: close`) and reads the whole answer. */
export function exchange(
  origin: string,
  req: RawRequest,
  limits: ClientLimits = DEFAULT_CLIENT_LIMITS,
): Promise<ExchangeResult> {
  const { hostname, port } = new URL(origin);
  const started = Date.now();
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let bytes = 0;
    let done = false;
    const socket = connect({ host: hostname, port: Number(port) });
    const finish = (r: Omit<ExchangeResult, 'durationMs'>): void => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      socket.destroy();
      resolve({ ...r, durationMs: Date.now() - started });
    };
    const timer = setTimeout(
      () => finish({ failure: { kind: 'timeout', afterMs: limits.timeoutMs } }),
      limits.timeoutMs,
    );
    // No half-close after the request: Node's server drops a half-closed client whose answer is
    // still being computed. `Connection: close` makes the server end the exchange instead.
    socket.on('connect', () => socket.write(serialize(req, hostname, port)));
    socket.on('data', (c: Buffer) => {
      bytes += c.length;
      if (bytes > limits.maxResponseBytes) return finish({ failure: { kind: 'oversized', bytes } });
      chunks.push(c);
    });
    socket.on('error', (err) => {
      // A server may answer and close before reading the whole body (413): keep what came.
      if (bytes > 0) return finishWith();
      finish({ failure: { kind: 'no-answer', message: err.message } });
    });
    const finishWith = (): void => {
      if (bytes === 0)
        return finish({ failure: { kind: 'no-answer', message: 'connection closed without an answer' } });
      try {
        finish({ response: parse(Buffer.concat(chunks)) });
      } catch (err) {
        const head = Buffer.concat(chunks).subarray(0, 200).toString('latin1');
        finish({
          failure: {
            kind: 'no-answer',
            message: `unreadable answer (${bytes} bytes): ${(err as Error).message}: ${JSON.stringify(head)}`,
          },
        });
      }
    };
    socket.on('end', finishWith);
    socket.on('close', finishWith);
  });
}

function serialize(req: RawRequest, host: string, port: string): Buffer {
  const body = req.body === undefined ? undefined : Buffer.from(req.body, 'utf8');
  const lines = [`${req.method} ${req.target} HTTP/1.1`, `host: ${host}:${port}`, 'connection: close'];
  for (const [k, v] of req.headers) lines.push(`${k}: ${v}`);
  if (body) lines.push(`content-length: ${body.length}`);
  const head = Buffer.from(lines.join('\r\n') + '\r\n\r\n', 'utf8');
  return body ? Buffer.concat([head, body]) : head;
}

function parse(raw: Buffer): RawResponse {
  const end = raw.indexOf('\r\n\r\n');
  if (end < 0) throw new Error('no end of headers');
  const [statusLine, ...headerLines] = raw.subarray(0, end).toString('latin1').split('\r\n');
  const m = /^HTTP\/1\.[01] (\d{3})/.exec(statusLine ?? '');
  if (!m) throw new Error(`bad status line ${JSON.stringify(statusLine)}`);
  const headers: Record<string, string> = {};
  for (const l of headerLines) {
    const i = l.indexOf(':');
    if (i > 0) headers[l.slice(0, i).trim().toLowerCase()] = l.slice(i + 1).trim();
  }
  let body = raw.subarray(end + 4);
  if (/chunked/i.test(headers['transfer-encoding'] ?? '')) body = dechunk(body);
  else if (headers['content-length'] !== undefined) body = body.subarray(0, Number(headers['content-length']));
  return { status: Number(m[1]), headers, text: body.toString('utf8'), bytes: raw.length };
}

function dechunk(b: Buffer): Buffer {
  const out: Buffer[] = [];
  let i = 0;
  for (;;) {
    const eol = b.indexOf('\r\n', i);
    if (eol < 0) throw new Error('truncated chunked body');
    const size = parseInt(b.subarray(i, eol).toString('latin1'), 16);
    if (!Number.isFinite(size)) throw new Error('bad chunk size');
    if (size === 0) return Buffer.concat(out);
    out.push(b.subarray(eol + 2, eol + 2 + size));
    i = eol + 2 + size + 2;
  }
}
