/**
 * Raw HTTP stream clients for the stream transports' tests: a POST (or GET) to `/graphql` whose
 * response body is read as it arrives, parsed as SSE events or multipart parts. The gateways are
 * test/ws/helpers.ts's (a Nomad simulator's real changes feed the gateway's own hub).
 */
import { connect, type Socket } from 'node:net';
import { MGMT } from '../ws/helpers';
import { until } from '../support/until';

export const SSE_ACCEPT = 'text/event-stream';
export const MULTIPART_ACCEPT = 'multipart/mixed;boundary="graphql";subscriptionSpec=1.0,application/json';

/** One SSE event block: its fields (`event`, `data`, `retry`), or a comment. */
export interface SseEvent {
  event?: string;
  data?: string;
  retry?: string;
  comment?: boolean;
}

export interface RawStream {
  status: number;
  headers: Headers;
  /** Everything received so far. */
  text(): string;
  /** Resolves once the response body ended (cleanly or not); `clean` says whether it ended without an error. */
  ended: Promise<{ clean: boolean }>;
  /** Goes away (aborts the request). */
  abort(): void;
}

/** Opens a stream; resolves once the response head arrived. */
export async function openStream(
  url: string,
  query: string,
  o: {
    accept?: string;
    headers?: Record<string, string>;
    variables?: Record<string, unknown>;
    method?: 'GET' | 'POST';
  } = {},
): Promise<RawStream> {
  const ctrl = new AbortController();
  const headers = { accept: o.accept ?? SSE_ACCEPT, 'X-Nomad-Token': MGMT, ...o.headers };
  const res =
    o.method === 'GET'
      ? await fetch(
          `${url}?${new URLSearchParams({ query, ...(o.variables ? { variables: JSON.stringify(o.variables) } : {}) })}`,
          { headers, signal: ctrl.signal },
        )
      : await fetch(url, {
          method: 'POST',
          headers: { 'content-type': 'application/json', ...headers },
          body: JSON.stringify({ query, variables: o.variables }),
          signal: ctrl.signal,
        });
  let text = '';
  const decoder = new TextDecoder();
  const ended = (async () => {
    try {
      for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>)
        text += decoder.decode(chunk, { stream: true });
      return { clean: true };
    } catch {
      return { clean: false };
    }
  })();
  return { status: res.status, headers: res.headers, text: () => text, ended, abort: () => ctrl.abort() };
}

/** The SSE events in `text` (complete blocks only). */
export function sseEvents(text: string): SseEvent[] {
  const blocks = text.split('\n\n');
  blocks.pop();
  return blocks.map((b) => {
    const e: SseEvent = {};
    for (const line of b.split('\n')) {
      if (line.startsWith(':')) e.comment = true;
      const m = /^(event|data|retry):\s?(.*)$/.exec(line);
      if (m) e[m[1] as 'event' | 'data' | 'retry'] = m[2];
    }
    return e;
  });
}

/** The JSON of each complete multipart part in `text` (boundary `graphql`). */
export function multipartParts(text: string): any[] {
  const parts = text.split('\r\n--graphql');
  // Before the first boundary: nothing; after the last: the part still coming, or `--` (the end).
  return parts.slice(1, -1).map((p) => JSON.parse(p.slice(p.indexOf('\r\n\r\n') + 4)));
}

/** Waits for the `n`-th (from 1) SSE `next` event whose data `match` accepts; returns its raw data. */
export async function nextData(s: RawStream, match: (data: any) => boolean = () => true, n = 1): Promise<string> {
  let found: string | undefined;
  await until(
    () => {
      const hits = sseEvents(s.text()).filter((e) => e.event === 'next' && match(JSON.parse(e.data!)));
      found = hits[n - 1]?.data;
      return found !== undefined;
    },
    () => `SSE next event; got so far: ${s.text().slice(-500)}`,
  );
  return found!;
}

/** The `volumeChanged` type of an execution result, if it has one. */
export const typeOf = (r: any): string | undefined => r?.data?.volumeChanged?.type;

/**
 * A subscription stream over its own TCP connection whose client stops reading once the first
 * result (SUBSCRIBED) arrived: a stalled consumer. Rejects with what came instead.
 */
export function pausedStream(
  url: string,
  query: string,
  o: { accept?: string; headers?: Record<string, string> } = {},
): Promise<Socket> {
  const u = new URL(url);
  const body = JSON.stringify({ query });
  const headers = {
    Host: u.host,
    'Content-Type': 'application/json',
    Accept: o.accept ?? SSE_ACCEPT,
    'X-Nomad-Token': MGMT,
    ...o.headers,
    'Content-Length': String(Buffer.byteLength(body)),
  };
  return new Promise((resolve, reject) => {
    const s = connect(Number(u.port), u.hostname);
    let got = '';
    const fail = (why: string): void => {
      s.destroy();
      reject(new Error(`no SUBSCRIBED: ${why}`));
    };
    s.on('error', (err) => fail(err.message));
    s.on('data', (d: Buffer) => {
      got += d.toString('latin1');
      if (got.includes('"SUBSCRIBED"')) {
        s.removeAllListeners('data');
        s.pause();
        resolve(s);
      } else if (got.includes('"errors"') || (got.length >= 12 && !got.startsWith('HTTP/1.1 200')))
        fail(got.slice(0, 300));
    });
    s.write(
      `POST ${u.pathname} HTTP/1.1\r\n${Object.entries(headers)
        .map(([k, v]) => `${k}: ${v}\r\n`)
        .join('')}\r\n${body}`,
    );
  });
}
