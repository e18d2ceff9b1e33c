/** Writing answers on node:http responses: JSON of our own, and Apollo's HTTP answers. */
import { HeaderMap, type HTTPGraphQLResponse } from '@apollo/server';
import type { IncomingHttpHeaders, ServerResponse } from 'node:http';
import type { EdgeError } from './errors';

export function sendJson(res: ServerResponse, status: number, body: unknown, extra: Record<string, string> = {}): void {
  sendJsonText(res, status, JSON.stringify(body), extra);
}

/** JSON already serialized. */
export function sendJsonText(
  res: ServerResponse,
  status: number,
  text: string,
  extra: Record<string, string> = {},
): void {
  res.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(text),
    ...extra,
  });
  res.end(text);
}

/** node:http's request headers as Apollo takes them (a repeated header's values joined with ", "). */
export function headerMapOf(headers: IncomingHttpHeaders): HeaderMap {
  const map = new HeaderMap();
  for (const [k, v] of Object.entries(headers)) if (v !== undefined) map.set(k, Array.isArray(v) ? v.join(', ') : v);
  return map;
}

/**
 * Writes Apollo's answer: `head` first, Apollo's own headers over it. A complete body is sent with
 * a Content-Length instead of chunked framing (one write, and the client needs no chunk parser);
 * an incremental one chunk by chunk.
 */
export async function sendHTTPGraphQLResponse(
  res: ServerResponse,
  result: HTTPGraphQLResponse,
  head: Record<string, string | number> = {},
): Promise<void> {
  const out = { ...head };
  for (const [k, v] of result.headers) out[k] = v;
  if (result.body.kind === 'complete') {
    out['content-length'] = Buffer.byteLength(result.body.string);
    res.writeHead(result.status ?? 200, out);
    res.end(result.body.string);
  } else {
    res.writeHead(result.status ?? 200, out);
    for await (const chunk of result.body.asyncIterator) res.write(chunk);
    res.end();
  }
}

/** An edge error as a GraphQL error response with its status and headers. */
export function sendEdgeError(res: ServerResponse, err: EdgeError): void {
  sendJson(res, err.status, err.toBody(), err.headers);
}
