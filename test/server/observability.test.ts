import { Writable } from 'node:stream';
import { startGateway, type RunningGateway } from '../../server/app';
import { createRegistry } from '../../server/backends';
import { createLogger } from '../../server/logger';
import { GatewayMetrics } from '../../server/metrics';
import type { NomadSimulator } from '../../simulators/nomad';
import { MGMT, disposeAll, seedVolumes, startNomad } from '../support/harness';

describe('metrics and logs', () => {
  let sim: NomadSimulator;
  let gateway: RunningGateway;
  const lines: string[] = [];
  const gql = (query: string, variables?: unknown, headers: Record<string, string> = {}) =>
    fetch(gateway.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-nomad-token': MGMT, ...headers },
      body: JSON.stringify({ query, variables }),
    }).then((r) => r.json());

  beforeAll(async () => {
    sim = await startNomad();
    seedVolumes(sim, 3);
    const sink = new Writable({
      write: (chunk, _enc, done) => (lines.push(...chunk.toString().split('\n').filter(Boolean)), done()),
    });
    const logger = createLogger('debug', sink);
    const metrics = new GatewayMetrics({ processMetrics: false });
    const registry = createRegistry(
      [{ id: 'east', kind: 'nomad', url: sim.url, timeoutMs: 5000, maxConnections: 4, readRetries: 0 }],
      (r) => {
        metrics.recordCall(r);
        logger.debug(r, 'backend call');
      },
    );
    // No background readiness probe: its calls would show in the counts and request logs read here.
    gateway = await startGateway({
      config: { port: 0, host: '127.0.0.1', maxConcurrentReads: 4, maxBodyBytes: 1_048_576 },
      registry,
      logger,
      metrics,
      readinessProbe: false,
    });
  });
  afterAll(async () => {
    await gateway.stop();
    await disposeAll();
  });

  it('should count operations by name and outcome, and backend calls by endpoint and status', async () => {
    await gql('query ListVols { volumes { nodes { id sizeBytes } } }');
    await gql('query Missing { volumeByNativeId(backend: "east", nativeId: "nope") { id } }');
    await gql('query Bad { volume(id: "bad") { id } }');
    const text = await fetch(gateway.url.replace('/graphql', '/metrics')).then((r) => r.text());
    expect(text).toContain('gateway_graphql_operations_total{operation="ListVols",type="query",outcome="success"} 1');
    // Refused before any backend call: no backend accepted the token in it, so no label of its own.
    expect(text).toContain('gateway_graphql_operations_total{operation="other",type="query",outcome="error"} 1');
    expect(text).toContain('gateway_backend_calls_total{backend="east",endpoint="GET /v1/volumes",status="200"} 1');
    expect(text).toContain(
      'gateway_backend_calls_total{backend="east",endpoint="GET /v1/volume/csi/:id",status="200"} 3',
    );
    expect(text).toContain(
      'gateway_backend_calls_total{backend="east",endpoint="GET /v1/volume/csi/:id",status="404"} 1',
    );
    expect(text).toMatch(/gateway_graphql_operation_duration_seconds_count\{operation="ListVols",type="query"\} 1/);
    expect(text).toMatch(
      /gateway_backend_call_duration_seconds_bucket\{le="[^"]+",backend="east",endpoint="GET \/v1\/volumes"\} 1/,
    );
  });

  it('should log one JSON line per request with the request id, and send the same id to the backend', async () => {
    sim.clearRequests();
    await gql('query Traced { volumes(first: 1) { nodes { id } } }', undefined, { 'x-request-id': 'trace-abc-123' });
    const entry = lines.map((l) => JSON.parse(l)).find((l) => l.msg === 'graphql request' && l.operation === 'Traced');
    expect(entry).toMatchObject({
      requestId: 'trace-abc-123',
      type: 'query',
      outcome: 'success',
      durationMs: expect.any(Number),
    });
    expect(sim.requests()[0]!.headers['x-request-id']).toBe('trace-abc-123');
  });

  it('should never log tokens or secrets', async () => {
    const secret = 'sup3r-s3cret-value';
    const made = await gql(
      'mutation Make($input: CreateVolumeInput!) { createVolume(input: $input) { volume { id } } }',
      {
        input: {
          backend: 'east',
          name: 'logged',
          nomad: {
            nativeId: 'logged',
            plugin: 'aws-ebs0',
            capabilities: [{ accessMode: 'SINGLE_NODE_WRITER', attachmentMode: 'FILE_SYSTEM' }],
            secrets: [{ key: 'k', value: secret }],
          },
        },
      },
    );
    // The secret went through a create that ran, not one refused before it was read.
    expect(made.errors).toBeUndefined();
    await gql(
      'mutation Del($id: ID!) { deleteVolume(input: { volumeId: $id, secrets: [{ key: "k", value: "' +
        secret +
        '" }] }) { deletedId } }',
      { id: 'x' },
    );
    await gql('{ volumes { nodes { id } } }', undefined, { 'x-nomad-token': 'wrong-token-value' });
    const all = lines.join('\n');
    expect(lines.length).toBeGreaterThan(5);
    for (const needle of [MGMT, secret, 'wrong-token-value', 'hunter2-secret']) expect(all).not.toContain(needle);
  });
});
