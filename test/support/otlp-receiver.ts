/** A real OTLP/HTTP trace receiver (node:http, `POST /v1/traces`) for tests of the gateway's tracing. */
import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One export request as it arrived. */
export interface OtlpRequest {
  contentType: string;
  body: Buffer;
}

/** A running receiver. */
export interface OtlpReceiver {
  /** Its base URL, for OTEL_EXPORTER_OTLP_ENDPOINT. */
  url: string;
  /** Every `POST /v1/traces` received, in order. */
  requests: OtlpRequest[];
  close(): void;
}

/** Starts a receiver on a free loopback port that keeps every export and answers 200 (an empty response in the request's encoding); other paths get 404. */
export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const requests: OtlpRequest[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (req.method !== 'POST' || req.url !== '/v1/traces') return void res.writeHead(404).end();
      const contentType = String(req.headers['content-type']);
      requests.push({ contentType, body: Buffer.concat(chunks) });
      // An empty ExportTraceServiceResponse.
      if (contentType === 'application/json') res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      else res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end();
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, requests, close: () => server.close() };
}
