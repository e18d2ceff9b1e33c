/** Writing JSON answers on node:http responses. */
import type { ServerResponse } from 'node:http';
import type { EdgeError } from './errors';

export function sendJson(res: ServerResponse, status: number, body: unknown, extra: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(text), ...extra });
  res.end(text);
}

/** An edge error as a GraphQL error response with its status and headers. */
export function sendEdgeError(res: ServerResponse, err: EdgeError): void {
  sendJson(res, err.status, err.toBody(), err.headers);
}
