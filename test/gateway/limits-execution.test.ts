/**
 * Limits enforced while executing, over HTTP against a real gateway and a real Nomad simulator:
 * the response-size cap, the per-operation backend-call budget (counted in the simulator's
 * request log) and the operation deadline.
 */
import type { NomadSimulator } from '../../simulators/nomad';
import { MGMT, disposeAll, seedVolumes, startGatewayFor, startNomad, type GatewayUnderTest } from '../support/harness';

const admin = { 'x-nomad-token': MGMT };
const codes = (body: any): string[] => (body.errors ?? []).map((e: any) => e.extensions?.code);

async function post(
  gw: GatewayUnderTest,
  query: string,
): Promise<{ status: number; body: any; text: string; ms: number }> {
  const started = Date.now();
  const res = await fetch(gw.gateway.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...admin },
    body: JSON.stringify({ query }),
  });
  const text = await res.text();
  return { status: res.status, body: JSON.parse(text), text, ms: Date.now() - started };
}

describe('response-size cap', () => {
  let sim: NomadSimulator;
  let gw: GatewayUnderTest;
  const MAX = 8 * 1024;

  beforeAll(async () => {
    sim = await startNomad();
    seedVolumes(sim, 200);
    gw = await startGatewayFor([{ id: 'east', url: sim.url }], { limits: { maxResponseBytes: MAX } });
  });
  afterAll(disposeAll);

  it('should stop resolving once the answer passes the cap, with one RESPONSE_TOO_LARGE error', async () => {
    const res = await post(
      gw,
      '{ volumes(first: 200) { nodes { id name namespace nativeId backendStatus details { ... on NomadVolumeDetails { externalId pluginId provider } } } } }',
    );
    expect(codes(res.body)).toEqual(['RESPONSE_TOO_LARGE']);
    expect(res.body.errors[0].extensions).toMatchObject({ limit: 'maxResponseBytes', max: MAX });
    // The answer stays near the cap, not the ~60 KB the full list would be.
    expect(res.text.length).toBeLessThan(2 * MAX);
  });

  it('should keep the data resolved before the cap where nullability allows', async () => {
    // details and its externalId are nullable: the first volumes keep theirs, later ones are nulled.
    const res = await post(
      gw,
      '{ a: volumes(first: 3) { nodes { id } } b: volumes(first: 200) { nodes { backendStatus details { ... on NomadVolumeDetails { externalId provider } } } } }',
    );
    expect(codes(res.body)).toEqual(['RESPONSE_TOO_LARGE']);
    expect(res.body.data.a.nodes).toHaveLength(3);
    const ext = res.body.data.b.nodes.map((n: any) => n.details?.externalId ?? null);
    expect(ext[0]).toBe('ext-default-vol-000');
    expect(ext.at(-1)).toBeNull();
  });

  it('should answer normally under the cap', async () => {
    const res = await post(gw, '{ volumes(first: 20) { nodes { id name } } }');
    expect(res.body.errors).toBeUndefined();
    expect(res.body.data.volumes.nodes).toHaveLength(20);
  });
});

describe('backend-call budget per operation', () => {
  let sim: NomadSimulator;
  let gw: GatewayUnderTest;

  beforeAll(async () => {
    sim = await startNomad();
    seedVolumes(sim, 30);
    gw = await startGatewayFor([{ id: 'east', url: sim.url }], { limits: { maxBackendCallsPerOperation: 8 } });
  });
  afterAll(disposeAll);
  beforeEach(() => sim.clearRequests());

  it('should send at most the budget to the backend and fail only the fields that need more calls', async () => {
    // One list call, then one read per volume for sizeBytes (a detail field, nullable).
    const res = await post(gw, '{ volumes(first: 30) { nodes { id sizeBytes } } }');
    expect(sim.requests().length).toBe(8);
    const nodes = res.body.data.volumes.nodes;
    expect(nodes).toHaveLength(30);
    expect(nodes.filter((n: any) => n.sizeBytes === 10737418240)).toHaveLength(7);
    expect(nodes.filter((n: any) => n.sizeBytes === null)).toHaveLength(23);
    expect(new Set(codes(res.body))).toEqual(new Set(['REQUEST_LIMIT_EXCEEDED']));
    expect(res.body.errors[0].extensions).toMatchObject({
      backend: 'east',
      limit: 'maxBackendCallsPerOperation',
      max: 8,
    });
    expect(res.body.errors[0].message).toContain('"east"');
  });

  it('should give each operation its own budget', async () => {
    for (let i = 0; i < 3; i++) {
      const res = await post(gw, '{ volumes(first: 5) { nodes { sizeBytes } } }');
      expect(res.body.errors).toBeUndefined();
    }
    expect(sim.requests().length).toBe(18);
  });
});

describe('operation deadline', () => {
  let sim: NomadSimulator;
  let gw: GatewayUnderTest;

  beforeAll(async () => {
    sim = await startNomad();
    seedVolumes(sim, 5);
    gw = await startGatewayFor([{ id: 'east', url: sim.url, timeoutMs: 20_000 }], {
      limits: { operationTimeoutMs: 300 },
    });
  });
  afterAll(disposeAll);
  afterEach(() => sim.setLatency(0));

  it('should answer OPERATION_TIMEOUT when backend calls outlive the deadline, long before the backend answers', async () => {
    sim.setLatency(15_000);
    const res = await post(gw, '{ volumeByNativeId(backend: "east", nativeId: "vol-001") { id } }');
    expect(codes(res.body)).toEqual(['OPERATION_TIMEOUT']);
    expect(res.body.errors[0].extensions).toMatchObject({ code: 'OPERATION_TIMEOUT', retryable: true });
    expect(res.body.data).toEqual({ volumeByNativeId: null });
    // Generous: the backend would answer after 15 s, the per-call deadline is 20 s.
    expect(res.ms).toBeLessThan(10_000);
  });

  it('should stop a merged list whose backend outlived the deadline with one OPERATION_TIMEOUT', async () => {
    sim.setLatency(15_000);
    const res = await post(gw, '{ volumes(first: 5) { nodes { id } } }');
    // The listing reports the backend's failure and the fields after the deadline stop: one error.
    expect(codes(res.body)).toEqual(['OPERATION_TIMEOUT']);
    expect(res.ms).toBeLessThan(10_000);
  });

  it('should answer fast operations as before', async () => {
    const res = await post(gw, '{ volumes(first: 5) { nodes { id sizeBytes } } }');
    expect(res.body.errors).toBeUndefined();
    expect(res.body.data.volumes.nodes).toHaveLength(5);
  });
});
