/**
 * OTLP's default protocol, http/protobuf, is really protobuf (issue 19 item 2, docs/tracing.md):
 * the gateway runs as a child process with an OTLP endpoint and no protocol set; a real node:http
 * receiver gets `application/x-protobuf` bodies carrying the caller's trace id and span id as raw
 * bytes (protobuf `bytes` fields; OTLP/JSON would carry them as hex text).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { until } from '../support/until';

const root = join(__dirname, '..', '..');
const bodies: Array<{ contentType: string; body: Buffer }> = [];
let receiver: Server;
let child: ChildProcess;
let graphqlUrl: string;

beforeAll(async () => {
  receiver = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (req.method !== 'POST' || req.url !== '/v1/traces') return void res.writeHead(404).end();
      bodies.push({ contentType: String(req.headers['content-type']), body: Buffer.concat(chunks) });
      // An empty ExportTraceServiceResponse.
      res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end();
    });
  });
  receiver.listen(0, '127.0.0.1');
  await once(receiver, 'listening');
  const clean = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('OTEL_')));
  child = spawn(process.execPath, ['--import', 'tsx', 'server/main.ts'], {
    cwd: root,
    env: {
      ...clean,
      PORT: '0',
      HOST: '127.0.0.1',
      LOG_LEVEL: 'warn',
      GATEWAY_BACKENDS: 'lab=memory',
      OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`,
      OTEL_BSP_SCHEDULE_DELAY: '100',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
  await until(() => /ready at (\S+)/.test(out) || child.exitCode !== null, 'the gateway to serve', 60_000);
  if (child.exitCode !== null) throw new Error(`gateway exited: ${err}`);
  graphqlUrl = /ready at (\S+)/.exec(out)![1]!;
}, 90_000);

afterAll(async () => {
  if (child && child.exitCode === null) {
    child.kill('SIGTERM');
    await once(child, 'exit');
  }
  receiver?.close();
});

describe('OTLP http/protobuf (the default protocol)', () => {
  it('should export the operation span as protobuf carrying the caller trace id and parent span id as bytes', async () => {
    const traceId = randomBytes(16);
    const spanId = randomBytes(8);
    const res = await fetch(graphqlUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json', traceparent: `00-${traceId.toString('hex')}-${spanId.toString('hex')}-01`, 'x-memory-token': 'lab-admin' },
      body: JSON.stringify({ query: 'query Lab { volumes { nodes { id } } }' }),
    });
    expect(((await res.json()) as { errors?: unknown }).errors).toBeUndefined();
    await until(() => bodies.some((b) => b.body.includes(traceId)), 'a body with the caller trace id', 20_000);
    const sent = bodies.find((b) => b.body.includes(traceId))!;
    expect(sent.contentType).toBe('application/x-protobuf');
    // The operation span's parentSpanId is the caller's span, as 8 raw bytes.
    expect(sent.body.includes(spanId)).toBe(true);
    expect(sent.body.includes(Buffer.from('query Lab'))).toBe(true);
    // Not OTLP/JSON: the ids are not hex text.
    expect(sent.body.includes(Buffer.from(traceId.toString('hex')))).toBe(false);
  }, 30_000);
});
