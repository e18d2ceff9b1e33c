/**
 * The transport's CLIENT spans against a real node:http server, with the SDK registered in this
 * test file's process (an in-memory exporter): parent, route template, status, the injected
 * `traceparent`, a failure's status, and a call refused by an open circuit breaker.
 */
import { context, propagation, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { InMemorySpanExporter, NodeTracerProvider, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-node';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ErrorCode } from '../../adapters/contract/errors';
import { Breaker, BREAKER_DEFAULTS } from '../../adapters/contract/breaker';
import { Transport } from '../../adapters/http/transport';

const exporter = new InMemorySpanExporter();
const provider = new NodeTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
const seen: Array<{ url: string; traceparent?: string }> = [];
let server: Server;
let baseUrl: string;

beforeAll(async () => {
  provider.register({ propagator: new W3CTraceContextPropagator() });
  server = createServer((req, res) => {
    seen.push({ url: req.url!, traceparent: req.headers.traceparent as string | undefined });
    res.writeHead(req.url!.startsWith('/fail') ? 500 : 200).end('{}');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await provider.shutdown();
  trace.disable();
  context.disable();
  propagation.disable();
  await new Promise<void>((r) => server.close(() => r()));
});

beforeEach(() => {
  exporter.reset();
  seen.length = 0;
});

describe('CLIENT spans of backend calls', () => {
  it('should make a child of the active span named by the route template, and send its traceparent', async () => {
    const t = new Transport({ backend: 'east', baseUrl });
    const parent = trace.getTracer('test').startSpan('operation', {}, ROOT_CONTEXT);
    const res = await context.with(trace.setSpan(ROOT_CONTEXT, parent), () =>
      t.send({
        method: 'GET',
        path: '/v1/volume/csi/vol-123',
        endpoint: 'GET /v1/volume/csi/:id',
        headers: { 'x-nomad-token': 'secret-token' },
      }),
    );
    parent.end();
    expect(res.status).toBe(200);
    const [span] = exporter.getFinishedSpans().filter((s) => s.kind === SpanKind.CLIENT);
    expect(span!.name).toBe('GET /v1/volume/csi/:id');
    expect(span!.parentSpanContext?.spanId).toBe(parent.spanContext().spanId);
    expect(span!.spanContext().traceId).toBe(parent.spanContext().traceId);
    expect(span!.attributes).toMatchObject({
      'http.request.method': 'GET',
      'url.template': '/v1/volume/csi/:id',
      'http.response.status_code': 200,
      'gateway.backend.id': 'east',
      'server.address': '127.0.0.1',
    });
    // The raw path (an id) and the token are nowhere in the span.
    expect(JSON.stringify(span!.attributes)).not.toMatch(/vol-123|secret-token/);
    expect(seen[0]!.traceparent).toBe(`00-${span!.spanContext().traceId}-${span!.spanContext().spanId}-01`);
    await t.close();
  });

  it('should mark a 5xx answer as an error and a call refused by an open breaker as refused, sending nothing', async () => {
    const breaker = new Breaker('east', 'nomad', { ...BREAKER_DEFAULTS, failures: 1 });
    const t = new Transport({ backend: 'east', baseUrl, breaker });
    expect((await t.send({ method: 'GET', path: '/fail', endpoint: 'GET /fail' })).status).toBe(500);
    await expect(t.send({ method: 'GET', path: '/fail', endpoint: 'GET /fail' })).rejects.toMatchObject({
      code: ErrorCode.BackendUnavailable,
    });
    expect(seen).toHaveLength(1);
    const [failed, refused] = exporter.getFinishedSpans().filter((s) => s.kind === SpanKind.CLIENT);
    expect(failed!.status.code).toBe(SpanStatusCode.ERROR);
    expect(failed!.attributes['http.response.status_code']).toBe(500);
    expect(refused!.status.code).toBe(SpanStatusCode.ERROR);
    expect(refused!.attributes).toMatchObject({
      'gateway.breaker.refused': true,
      'error.type': ErrorCode.BackendUnavailable,
    });
    expect(refused!.attributes['http.response.status_code']).toBeUndefined();
    await t.close();
  });
});
