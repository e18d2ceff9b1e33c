/**
 * The graceful stop flushes spans (docs/tracing.md): with a batch delay far longer than the test,
 * the spans of a request reach the OTLP/HTTP receiver only because SIGTERM's shutdown exports them
 * before the process exits.
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { until } from '../support/until';

const root = join(__dirname, '..', '..');

it('should export the batched spans on SIGTERM before exiting', async () => {
  const traceIds: string[] = [];
  const receiver = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      if (req.url === '/v1/traces') for (const m of body.matchAll(/"traceId":"([0-9a-f]{32})"/g)) traceIds.push(m[1]!);
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  receiver.listen(0, '127.0.0.1');
  await once(receiver, 'listening');
  const clean = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('OTEL_')));
  const child = spawn(process.execPath, ['--import', 'tsx', 'server/main.ts'], {
    cwd: root,
    env: {
      ...clean,
      PORT: '0',
      HOST: '127.0.0.1',
      LOG_LEVEL: 'warn',
      GATEWAY_BACKENDS: 'lab=memory',
      OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`,
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      // Nothing leaves on its own within the test: only the shutdown's flush sends the batch.
      OTEL_BSP_SCHEDULE_DELAY: '600000',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  try {
    await until(() => /ready at (\S+)/.test(out) || child.exitCode !== null, 'the gateway to serve', 60_000);
    const url = /ready at (\S+)/.exec(out)![1]!;
    const traceId = randomBytes(16).toString('hex');
    const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', traceparent: `00-${traceId}-${randomBytes(8).toString('hex')}-01`, 'x-memory-token': 'lab-admin' }, body: JSON.stringify({ query: '{ volumes { nodes { id } } }' }) });
    expect(res.status).toBe(200);
    await new Promise((r) => setTimeout(r, 500));
    expect(traceIds).not.toContain(traceId);
    const exited = once(child, 'exit');
    child.kill('SIGTERM');
    const [code] = await exited;
    expect(code).toBe(0);
    expect(traceIds).toContain(traceId);
  } finally {
    if (child.exitCode === null) child.kill('SIGKILL');
    receiver.close();
  }
}, 60_000);
