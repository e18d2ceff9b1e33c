/**
 * HTTP batching over raw HTTP (issue 31, item 2; server/http/batch.ts): each operation of a batch
 * counts against the limits a request of its own meets: its own backend-call budget and loaders,
 * validation limits, trusted documents, the subscription refusal, and the per-caller rate (one
 * charge per operation). The batch itself is capped (`MAX_BATCH_SIZE`), must be a non-empty list
 * of objects, and passes CSRF prevention as one request. The real clients: test/clients/.
 */
import type { NomadSimulator } from '../../simulators/nomad';
import { TrustedDocuments } from '../../server/http/trusted-documents';
import type { HttpEdgeOptions } from '../../server/http/config';
import { disposeAll, MGMT, seedVolumes, startGatewayFor, startNomad, type GatewayUnderTest } from '../support/harness';

let sim: NomadSimulator;
const admin = { 'x-nomad-token': MGMT };
const BACKENDS = '{ storageBackends { id } }';

/** POSTs `body` (a batch) as JSON; answers the status and parsed body. */
async function post(
  gw: GatewayUnderTest,
  body: unknown,
  headers: Record<string, string> = { 'content-type': 'application/json', ...admin },
): Promise<{ status: number; body: any }> {
  const res = await fetch(gw.gateway.url, { method: 'POST', headers, body: JSON.stringify(body) });
  return { status: res.status, body: await res.json() };
}

const codeOf = (answer: any): string | undefined => answer?.errors?.[0]?.extensions?.code;
const gateway = (http: HttpEdgeOptions, limits = {}) =>
  startGatewayFor([{ id: 'east', url: sim.url }], { http, limits });

beforeAll(async () => {
  sim = await startNomad();
  seedVolumes(sim, 10);
});
afterAll(disposeAll);

describe('the batch', () => {
  let gw: GatewayUnderTest;
  beforeAll(async () => void (gw = await gateway({})));

  it('should answer each operation in its place, at most MAX_BATCH_SIZE (10 by default)', async () => {
    const ten = Array.from({ length: 10 }, (_, i) => ({ query: `query Q${i} { storageBackends { id } }` }));
    const ok = await post(gw, ten);
    expect(ok.status).toBe(200);
    expect(ok.body).toEqual(ten.map(() => ({ data: { storageBackends: [{ id: 'east' }] } })));
    const over = await post(gw, [...ten, { query: BACKENDS }]);
    expect(over.status).toBe(413);
    expect(over.body.errors[0].extensions).toEqual({ code: 'BATCH_TOO_LARGE', maxBatchSize: 10, operations: 11 });
  });

  it('should refuse an empty batch and one with an item that is not an object, with BAD_REQUEST', async () => {
    for (const body of [[], [{ query: BACKENDS }, 1], [null]]) {
      const r = await post(gw, body);
      expect({ body, status: r.status, code: codeOf(r.body) }).toEqual({ body, status: 400, code: 'BAD_REQUEST' });
    }
  });

  it('should refuse a subscription in its own place, and pass CSRF prevention as one request', async () => {
    const r = await post(gw, [{ query: BACKENDS }, { query: 'subscription { volumeChanged { type } }' }]);
    expect(r.status).toBe(200);
    expect(r.body[0]).toEqual({ data: { storageBackends: [{ id: 'east' }] } });
    expect(codeOf(r.body[1])).toBe('SUBSCRIPTION_NOT_SUPPORTED_OVER_HTTP');
    // A form's or text/plain POST without a credential: refused whole, as a single operation would be.
    const simple = await post(gw, [{ query: BACKENDS }], { 'content-type': 'text/plain; charset=json' });
    expect([simple.status, codeOf(simple.body)]).toEqual([400, 'CSRF_PREFLIGHT_REQUIRED']);
  });

  it('should be off with MAX_BATCH_SIZE=0', async () => {
    const off = await gateway({ maxBatchSize: 0 });
    const r = await post(off, [{ query: BACKENDS }]);
    expect([r.status, codeOf(r.body)]).toEqual([413, 'BATCH_TOO_LARGE']);
    expect(r.body.errors[0].message).toMatch(/batching is off/);
  });
});

describe('each operation of a batch', () => {
  it('should get its own backend-call budget and loaders, as a request of its own', async () => {
    const gw = await gateway({}, { maxBackendCallsPerOperation: 8 });
    // One list call and one read per volume: 8 calls, the whole budget of one operation.
    const op = { query: '{ volumes(first: 7) { nodes { sizeBytes } } }' };
    sim.clearRequests();
    const r = await post(gw, [op, op]);
    expect(r.body.map(codeOf)).toEqual([undefined, undefined]);
    expect(r.body[1]).toEqual(r.body[0]);
    // Nothing shared: each operation made its own 8 calls.
    expect(sim.requests()).toHaveLength(16);
  });

  it('should meet the validation limits alone', async () => {
    const gw = await gateway({});
    let deep = 'id';
    for (let i = 0; i < 3; i++) deep = `attachments { volume { ${deep} } }`;
    const r = await post(gw, [{ query: `{ volumes(first: 1) { nodes { id ${deep} } } }` }, { query: BACKENDS }]);
    expect(r.status).toBe(200);
    expect(codeOf(r.body[0])).toBe('MAX_DEPTH_LIMIT');
    expect(r.body[1]).toEqual({ data: { storageBackends: [{ id: 'east' }] } });
  });

  it('should be screened against trusted documents, a refusal counted in /metrics', async () => {
    const gw = await gateway({ trustedDocuments: { documents: TrustedDocuments.fromJson({ backends: BACKENDS }) } });
    const r = await post(gw, [{ documentId: 'backends' }, { query: '{ volumes(first: 1) { nodes { id } } }' }]);
    expect(r.status).toBe(200);
    expect(r.body[0]).toEqual({ data: { storageBackends: [{ id: 'east' }] } });
    expect(codeOf(r.body[1])).toBe('PERSISTED_QUERY_NOT_IN_LIST');
    const metrics = await (await fetch(gw.gateway.url.replace('/graphql', '/metrics'))).text();
    expect(metrics).toMatch(/gateway_http_refusals_total\{code="PERSISTED_QUERY_NOT_IN_LIST",status="400"\} 1/);
  });

  it("should be charged to the caller's rate: a batch is as many requests as it holds operations", async () => {
    const gw = await gateway({ rateLimit: { caller: { requestsPerSecond: 0.01, burst: 4 } } });
    const five = Array.from({ length: 5 }, () => ({ query: BACKENDS }));
    const refused = await post(gw, five);
    expect([refused.status, codeOf(refused.body)]).toEqual([429, 'RATE_LIMITED']);
    // Refused whole and charged nothing: four still fit, then the bucket is empty.
    expect((await post(gw, five.slice(1))).status).toBe(200);
    expect((await post(gw, [{ query: BACKENDS }])).status).toBe(429);
  });
});
