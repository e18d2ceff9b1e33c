/**
 * `OTEL_PROPAGATORS` (issue 19 item 2, docs/tracing.md): the gateway runs as a child process with
 * tracing on (an OTLP endpoint that answers 200) in front of a real Nomad simulator. By default
 * (`tracecontext,baggage`) the caller's `traceparent` and `baggage` reach the backend; with
 * `none,b3` neither does (b3 is warned about and ignored, as the SDK does).
 */
import { randomBytes } from 'node:crypto';
import type { NomadSimulator } from '../../simulators/nomad';
import { disposeAll, MGMT, seedVolumes, startNomad } from '../support/harness';
import { startGatewayProcess } from '../support/gateway-process';
import { startOtlpReceiver, type OtlpReceiver } from '../support/otlp-receiver';

let receiver: OtlpReceiver;
let sim: NomadSimulator;
const children: Array<ReturnType<typeof startGatewayProcess>> = [];

beforeAll(async () => {
  receiver = await startOtlpReceiver();
  sim = await startNomad();
  seedVolumes(sim, 1);
});

afterAll(async () => {
  for (const c of children) await c.stop();
  receiver?.close();
  await disposeAll();
});

/** Starts the gateway with `env` on top of tracing to the receiver; answers its URL and its output so far. */
async function gateway(env: Record<string, string>): Promise<{ url: string; output: () => string }> {
  const child = startGatewayProcess(
    {
      LOG_LEVEL: 'warn',
      GATEWAY_BACKENDS: `east=nomad@${sim.url}`,
      GATEWAY_BACKEND_EAST_TOKEN: MGMT,
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
      ...env,
    },
    { withoutInheritedOtel: true },
  );
  children.push(child);
  return { url: await child.serving(), output: () => child.output() + child.errors() };
}

/** Lists volumes with a fresh `traceparent` and a `baggage`; answers them and the headers every backend request got meanwhile. */
async function listWithContext(url: string): Promise<{
  traceId: string;
  baggage: string;
  sent: Array<{ path: string; traceparent?: string; baggage?: string }>;
}> {
  const traceId = randomBytes(16).toString('hex');
  const baggage = `tenant=t-${randomBytes(4).toString('hex')}`;
  sim.clearRequests();
  const res = await fetch(url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      traceparent: `00-${traceId}-${randomBytes(8).toString('hex')}-01`,
      baggage,
      'x-nomad-token': MGMT,
    },
    body: JSON.stringify({ query: '{ volumes { nodes { id } } }' }),
  });
  expect(((await res.json()) as { errors?: unknown }).errors).toBeUndefined();
  const sent = sim
    .requests()
    .map((r) => ({ path: `${r.method} ${r.path}`, traceparent: r.headers.traceparent, baggage: r.headers.baggage }));
  expect(sent.map((r) => r.path)).toContain('GET /v1/volumes');
  return { traceId, baggage, sent };
}

describe('OTEL_PROPAGATORS', () => {
  it('should pass the caller traceparent and baggage to the backend by default (tracecontext,baggage)', async () => {
    const gw = await gateway({});
    const { traceId, baggage, sent } = await listWithContext(gw.url);
    // The list's request (the watcher's own reads carry traces of their own).
    const list = sent.filter((r) => r.traceparent?.includes(traceId));
    expect(list.map((r) => r.path)).toEqual(['GET /v1/volumes']);
    expect(list[0]!.baggage).toBe(baggage);
  }, 90_000);

  it('should read and pass nothing with none, and warn about an unknown propagator instead of refusing it', async () => {
    const gw = await gateway({ OTEL_PROPAGATORS: 'none,b3' });
    const { sent } = await listWithContext(gw.url);
    // No propagator: no request of the list's or the watcher's carries either header.
    expect(sent.filter((r) => r.traceparent !== undefined || r.baggage !== undefined)).toEqual([]);
    expect(gw.output()).toMatch(/OTEL_PROPAGATORS names propagators the gateway does not have/);
    expect(gw.output()).toContain('b3');
  }, 90_000);
});
