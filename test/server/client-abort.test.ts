/**
 * A client that hangs up is not a backend failure (issue 17, item 13). One query reads a volume
 * on each of two Nomad clusters; nomad-east answers at once, nomad-west slowly (the simulator's
 * latency control), and the client closes its socket while nomad-west is still answering. The
 * operation must be logged and counted as `aborted`, with no BACKEND_UNAVAILABLE and no failed
 * backend call: nomad-west was fine.
 */
import { request } from 'node:http';
import { Writable } from 'node:stream';
import { startGateway, type RunningGateway } from '../../server/app';
import { createRegistry } from '../../server/backends';
import { createLogger } from '../../server/logger';
import { GatewayMetrics } from '../../server/metrics';
import type { NomadSimulator } from '../../simulators/nomad';
import { MGMT, disposeAll, seedVolumes, startNomad } from '../support/harness';
import { until } from '../support/until';

let east: NomadSimulator;
let west: NomadSimulator;
let gateway: RunningGateway;
const lines: Array<Record<string, unknown>> = [];

const scrape = (): Promise<string> => fetch(gateway.url.replace('/graphql', '/metrics')).then((r) => r.text());
/** The samples of `metric` whose labels contain every `label="value"` given, summed. */
const sum = (text: string, metric: string, ...labels: string[]): number =>
  text
    .split('\n')
    .filter((l) => l.startsWith(`${metric}{`) && labels.every((x) => l.slice(0, l.lastIndexOf(' ')).includes(x)))
    .reduce((n, l) => n + Number(l.slice(l.lastIndexOf(' ') + 1)), 0);

beforeAll(async () => {
  east = await startNomad();
  west = await startNomad();
  seedVolumes(east, 2, 'default', 'east');
  seedVolumes(west, 2, 'default', 'west');
  const sink = new Writable({
    write: (chunk, _enc, done) => (
      lines.push(
        ...chunk
          .toString()
          .split('\n')
          .filter(Boolean)
          .map((l: string) => JSON.parse(l)),
      ),
      done()
    ),
  });
  const logger = createLogger('info', sink);
  const metrics = new GatewayMetrics({ processMetrics: false });
  const registry = createRegistry(
    [
      { id: 'nomad-east', kind: 'nomad', url: east.url, timeoutMs: 10_000, maxConnections: 4, readRetries: 2 },
      { id: 'nomad-west', kind: 'nomad', url: west.url, timeoutMs: 10_000, maxConnections: 4, readRetries: 2 },
    ],
    metrics.recordCall,
  );
  gateway = await startGateway({
    config: { port: 0, host: '127.0.0.1', maxConcurrentReads: 4, maxBodyBytes: 1_048_576 },
    registry,
    logger,
    metrics,
    live: false,
    readinessProbe: false,
  }); // the probe's calls would take failNext's answers
});
afterAll(async () => {
  await gateway.stop();
  await disposeAll();
});

/** Sends `query` and destroys the socket once `west` has received the gateway's call. */
async function sendAndHangUp(query: string): Promise<void> {
  const body = JSON.stringify({ query });
  const u = new URL(gateway.url);
  const seen = west.requests().length;
  const req = request({
    host: u.hostname,
    port: u.port,
    path: u.pathname,
    method: 'POST',
    headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), 'x-nomad-token': MGMT },
  });
  req.on('error', () => undefined);
  req.end(body);
  await until(() => west.requests().length > seen, 'nomad-west to receive the call');
  req.destroy();
}

it('should count a query whose client hung up as aborted, not as a backend failure', async () => {
  west.setLatency(3_000);
  try {
    const before = await scrape();
    await sendAndHangUp(
      'query SlowList { storageBackends { id } slow: volumeByNativeId(backend: "nomad-west", nativeId: "west-000") { id } }',
    );
    await until(
      () => lines.some((l) => l.msg === 'graphql request' && l.operation === 'SlowList'),
      'the request log line',
      20_000,
    );
    // nomad-west answers in the background (the transport lets requests on the wire finish).
    await until(
      async () =>
        sum(await scrape(), 'gateway_backend_calls_total', 'backend="nomad-west"', 'status="200"') >
        sum(before, 'gateway_backend_calls_total', 'backend="nomad-west"', 'status="200"'),
      "nomad-west's answer to be recorded",
      20_000,
    );
    const after = await scrape();

    const line = lines.find((l) => l.msg === 'graphql request' && l.operation === 'SlowList')!;
    expect(line.outcome).toBe('aborted');
    expect(line.errorCodes ?? []).not.toContain('BACKEND_UNAVAILABLE');
    // By outcome, whatever the label (no backend accepted this caller before it left: `other`).
    const moved = (outcome: string): number =>
      sum(after, 'gateway_graphql_operations_total', `outcome="${outcome}"`) -
      sum(before, 'gateway_graphql_operations_total', `outcome="${outcome}"`);
    expect({ aborted: moved('aborted'), partial: moved('partial'), error: moved('error') }).toEqual({
      aborted: 1,
      partial: 0,
      error: 0,
    });
    // No backend call counted as failed (status 0 = no answer), on either backend.
    expect(sum(after, 'gateway_backend_calls_total', 'status="0"')).toBe(
      sum(before, 'gateway_backend_calls_total', 'status="0"'),
    );
  } finally {
    west.setLatency(0);
  }
});

it('should still count a query whose backend fails as a backend failure', async () => {
  west.failNext({ count: 3, status: 503, body: 'no leader' });
  const res = await fetch(gateway.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-nomad-token': MGMT },
    body: JSON.stringify({
      query:
        'query FailingList { fast: volumeByNativeId(backend: "nomad-east", nativeId: "east-000") { id } slow: volumeByNativeId(backend: "nomad-west", nativeId: "west-000") { id } }',
    }),
  });
  const body = (await res.json()) as { errors?: Array<{ extensions?: { code?: string } }> };
  expect(body.errors?.map((e) => e.extensions?.code)).toContain('BACKEND_UNAVAILABLE');
  await until(
    () => lines.some((l) => l.msg === 'graphql request' && l.operation === 'FailingList'),
    'the request log line',
  );
  const line = lines.find((l) => l.msg === 'graphql request' && l.operation === 'FailingList')!;
  expect(line.outcome).toBe('partial');
  expect(sum(await scrape(), 'gateway_graphql_operations_total', 'operation="FailingList"', 'outcome="partial"')).toBe(
    1,
  );
});
