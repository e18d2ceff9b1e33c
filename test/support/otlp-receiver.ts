/**
 * A real OTLP/HTTP receiver (node:http, `POST /v1/traces` and `POST /v1/metrics`) for tests of the
 * gateway's tracing and metrics export, and the spans and metrics of its OTLP/JSON exports.
 */
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
  /** Every `POST /v1/metrics` received, in order. */
  metrics: OtlpRequest[];
  close(): void;
}

/** Starts a receiver on a free loopback port that keeps every export and answers 200 (an empty response in the request's encoding); other paths get 404. */
export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const requests: OtlpRequest[] = [];
  const metrics: OtlpRequest[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const kept = req.url === '/v1/traces' ? requests : req.url === '/v1/metrics' ? metrics : undefined;
      if (req.method !== 'POST' || !kept) return void res.writeHead(404).end();
      const contentType = String(req.headers['content-type']);
      kept.push({ contentType, body: Buffer.concat(chunks) });
      // An empty Export{Trace,Metrics}ServiceResponse.
      if (contentType === 'application/json') res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      else res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end();
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    metrics,
    close: () => server.close(),
  };
}

/** One span as OTLP/JSON carries it (ids in hex). */
export interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes: Array<{ key: string; value: Record<string, unknown> }>;
  links?: Array<{ traceId: string; spanId: string }>;
}

/** OTLP span kinds (SpanKind: SERVER 2, CLIENT 3). */
export const SERVER = 2;
export const CLIENT = 3;

/** OTLP/JSON ids are hex; some encoders send base64: both come out as lower-case hex. */
const hex = (id: string | undefined): string | undefined =>
  id === undefined || id === ''
    ? undefined
    : /^[0-9a-fA-F]+$/.test(id)
      ? id.toLowerCase()
      : Buffer.from(id, 'base64').toString('hex');

/** The value of attribute `key` of `s`, whatever its type. */
export function attr(s: OtlpSpan, key: string): unknown {
  const v = s.attributes.find((a) => a.key === key)?.value;
  return v === undefined ? undefined : Object.values(v)[0];
}

/** The spans of one OTLP/JSON export, ids as lower-case hex. */
export function spansIn(r: OtlpRequest): OtlpSpan[] {
  const body = JSON.parse(r.body.toString('utf8')) as {
    resourceSpans: Array<{ resource: unknown; scopeSpans: Array<{ spans: OtlpSpan[] }> }>;
  };
  return body.resourceSpans.flatMap((rs) =>
    rs.scopeSpans.flatMap((ss) =>
      ss.spans.map((s) => ({
        ...s,
        traceId: hex(s.traceId)!,
        spanId: hex(s.spanId)!,
        parentSpanId: hex(s.parentSpanId),
        links: s.links?.map((l) => ({ traceId: hex(l.traceId)!, spanId: hex(l.spanId)! })),
      })),
    ),
  );
}

/** One series of an OTLP/JSON metric: its attributes as strings, and its value (a histogram's count, sum and per-bucket counts). */
export interface OtlpPoint {
  attributes: Record<string, string>;
  value?: number;
  count?: number;
  sum?: number;
  bounds?: number[];
  bucketCounts?: number[];
}

/** One metric of an OTLP/JSON metrics export. */
export interface OtlpMetric {
  name: string;
  kind: 'sum' | 'gauge' | 'histogram';
  /** Sums only. */
  monotonic?: boolean;
  points: OtlpPoint[];
}

type JsonPoint = {
  attributes?: Array<{ key: string; value: Record<string, unknown> }>;
  asDouble?: number | string;
  asInt?: number | string;
  count?: number | string;
  sum?: number;
  explicitBounds?: number[];
  bucketCounts?: Array<number | string>;
};

/** The metrics of one OTLP/JSON export (64-bit integers may come as strings: numbers here). */
export function metricsIn(r: OtlpRequest): OtlpMetric[] {
  const body = JSON.parse(r.body.toString('utf8')) as {
    resourceMetrics: Array<{ scopeMetrics: Array<{ metrics: Array<Record<string, any>> }> }>;
  };
  const point = (p: JsonPoint): OtlpPoint => ({
    attributes: Object.fromEntries((p.attributes ?? []).map((a) => [a.key, String(Object.values(a.value)[0])])),
    ...(p.asDouble !== undefined || p.asInt !== undefined ? { value: Number(p.asDouble ?? p.asInt) } : {}),
    ...(p.bucketCounts
      ? { count: Number(p.count), sum: p.sum, bounds: p.explicitBounds ?? [], bucketCounts: p.bucketCounts.map(Number) }
      : {}),
  });
  return body.resourceMetrics.flatMap((rm) =>
    rm.scopeMetrics.flatMap((sm) =>
      sm.metrics.map((m): OtlpMetric => {
        const kind = m.sum ? 'sum' : m.gauge ? 'gauge' : 'histogram';
        const data = m[kind] as { dataPoints: JsonPoint[]; isMonotonic?: boolean };
        return {
          name: m.name as string,
          kind,
          ...(kind === 'sum' ? { monotonic: data.isMonotonic === true } : {}),
          points: data.dataPoints.map(point),
        };
      }),
    ),
  );
}
