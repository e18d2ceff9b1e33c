/**
 * The graceful stop flushes spans (docs/tracing.md): with a batch delay far longer than the test,
 * the spans of a request reach the OTLP/HTTP receiver only because SIGTERM's shutdown exports them
 * before the process exits.
 */
import { randomBytes } from 'node:crypto';
import { startGatewayProcess } from '../support/gateway-process';
import { startOtlpReceiver } from '../support/otlp-receiver';

it('should export the batched spans on SIGTERM before exiting', async () => {
  const receiver = await startOtlpReceiver();
  const traceIds = (): string[] =>
    receiver.requests.flatMap((r) =>
      [...r.body.toString('utf8').matchAll(/"traceId":"([0-9a-f]{32})"/g)].map((m) => m[1]!),
    );
  const gateway = startGatewayProcess(
    {
      LOG_LEVEL: 'warn',
      GATEWAY_BACKENDS: 'lab=memory',
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      // Nothing leaves on its own within the test: only the shutdown's flush sends the batch.
      OTEL_BSP_SCHEDULE_DELAY: '600000',
    },
    { withoutInheritedOtel: true },
  );
  const { child } = gateway;
  try {
    const url = await gateway.serving();
    const traceId = randomBytes(16).toString('hex');
    const res = await fetch(url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        traceparent: `00-${traceId}-${randomBytes(8).toString('hex')}-01`,
        'x-memory-token': 'lab-admin',
      },
      body: JSON.stringify({ query: '{ volumes { nodes { id } } }' }),
    });
    expect(res.status).toBe(200);
    await new Promise((r) => setTimeout(r, 500));
    expect(traceIds()).not.toContain(traceId);
    child.kill('SIGTERM');
    const [code] = await gateway.exited;
    expect(code).toBe(0);
    expect(traceIds()).toContain(traceId);
  } finally {
    if (child.exitCode === null) child.kill('SIGKILL');
    receiver.close();
  }
}, 60_000);
