/**
 * OTLP's default protocol, http/protobuf, is really protobuf (issue 19 item 2, docs/tracing.md):
 * the gateway runs as a child process with an OTLP endpoint and no protocol set; a real node:http
 * receiver gets `application/x-protobuf` bodies carrying the caller's trace id and span id as raw
 * bytes (protobuf `bytes` fields; OTLP/JSON would carry them as hex text).
 */
import { randomBytes } from 'node:crypto';
import { startGatewayProcess } from '../support/gateway-process';
import { startOtlpReceiver, type OtlpReceiver, type OtlpRequest } from '../support/otlp-receiver';
import { until } from '../support/until';

let receiver: OtlpReceiver;
let gateway: ReturnType<typeof startGatewayProcess> | undefined;
let graphqlUrl: string;

beforeAll(async () => {
  receiver = await startOtlpReceiver();
  gateway = startGatewayProcess(
    {
      LOG_LEVEL: 'warn',
      GATEWAY_BACKENDS: 'lab=memory',
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
      OTEL_BSP_SCHEDULE_DELAY: '100',
    },
    { withoutInheritedOtel: true },
  );
  graphqlUrl = await gateway.serving();
}, 90_000);

afterAll(async () => {
  await gateway?.stop();
  receiver?.close();
});

const bodies = (): OtlpRequest[] => receiver.requests;

describe('OTLP http/protobuf (the default protocol)', () => {
  it('should export the operation span as protobuf carrying the caller trace id and parent span id as bytes', async () => {
    const traceId = randomBytes(16);
    const spanId = randomBytes(8);
    const res = await fetch(graphqlUrl, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        traceparent: `00-${traceId.toString('hex')}-${spanId.toString('hex')}-01`,
        'x-memory-token': 'lab-admin',
      },
      body: JSON.stringify({ query: 'query Lab { volumes { nodes { id } } }' }),
    });
    expect(((await res.json()) as { errors?: unknown }).errors).toBeUndefined();
    await until(() => bodies().some((b) => b.body.includes(traceId)), 'a body with the caller trace id', 20_000);
    const sent = bodies().find((b) => b.body.includes(traceId))!;
    expect(sent.contentType).toBe('application/x-protobuf');
    // The operation span's parentSpanId is the caller's span, as 8 raw bytes.
    expect(sent.body.includes(spanId)).toBe(true);
    expect(sent.body.includes(Buffer.from('query Lab'))).toBe(true);
    // Not OTLP/JSON: the ids are not hex text.
    expect(sent.body.includes(Buffer.from(traceId.toString('hex')))).toBe(false);
  }, 30_000);
});
