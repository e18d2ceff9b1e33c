/**
 * Compiled execution (graphql-jit behind Apollo's executor hook) answers exactly as graphql-js:
 * two gateways over the same simulator, one per engine, get the same documents and must send
 * the same status and body (errors in any order: GraphQL does not order them): data, partial
 * results with typed errors, bad variables, the response-size cap, the cost limit. The compiled gateway's `gateway_executions_total` shows
 * which ran compiled and why a request went to graphql-js (federated traces, variables inside
 * literals).
 */
import type { NomadSimulator } from '../../simulators/nomad';
import { MGMT, closedPortUrl, disposeAll, seedVolumes, startGatewayFor, startNomad, type GatewayUnderTest } from '../support/harness';

let sim: NomadSimulator;
let compiled: GatewayUnderTest;
let interpreted: GatewayUnderTest;
/** The same pair with a small response-size cap. */
let capped: [GatewayUnderTest, GatewayUnderTest];
const auth = { 'x-nomad-token': MGMT };

beforeAll(async () => {
  sim = await startNomad();
  seedVolumes(sim, 12);
  const dead = await closedPortUrl();
  const backends = [
    { id: 'east', url: sim.url },
    { id: 'dead', url: dead, readRetries: 0 },
  ];
  const limits = { maxCost: 400 };
  compiled = await startGatewayFor(backends, { executionEngine: 'compiled', limits });
  interpreted = await startGatewayFor(backends, { executionEngine: 'graphql-js', limits });
  const small = { maxResponseBytes: 1024 };
  capped = [await startGatewayFor(backends, { executionEngine: 'compiled', limits: small }), await startGatewayFor(backends, { executionEngine: 'graphql-js', limits: small })];
});
afterAll(disposeAll);

async function executions(): Promise<Record<string, number>> {
  const text = await (await fetch(new URL('/metrics', compiled.gateway.url))).text();
  const out: Record<string, number> = {};
  for (const m of text.matchAll(/^gateway_executions_total\{engine="([^"]+)",reason="([^"]+)"\} (\d+)/gm)) out[`${m[1]}/${m[2]}`] = Number(m[3]);
  return out;
}

const inOrder = (r: { status: number; body: any }): unknown => {
  const errors = r.body.errors && [...r.body.errors].sort((x: any, y: any) => (JSON.stringify(x) < JSON.stringify(y) ? -1 : 1));
  return { ...r, body: { ...r.body, ...(errors ? { errors } : {}) } };
};

/** Both gateways' answers to the same request, which must be equal. */
async function same(query: string, variables?: Record<string, unknown>, headers: Record<string, string> = auth, pair: [GatewayUnderTest, GatewayUnderTest] = [compiled, interpreted]): Promise<{ status: number; body: any }> {
  const [a, b] = await Promise.all(pair.map((g) => g.gql(query, variables, headers)));
  // The order of errors is not the same (graphql-jit collects them its own way; GraphQL does not order them).
  expect(inOrder(a!)).toEqual(inOrder(b!));
  return a!;
}

const LIST = `query($first: Int!, $after: String) {
  volumes(first: $first, after: $after) {
    edges { cursor node { id name status sizeBytes backend { id } details { __typename ... on NomadVolumeDetails { pluginId accessMode } } } }
    pageInfo { hasNextPage endCursor }
  }
}`;

describe('compiled execution answers as graphql-js', () => {
  it('should list the same page with cursors, details and a partial result naming the dead backend', async () => {
    const before = await executions();
    const r = await same(LIST, { first: 5 });
    expect(r.body.data.volumes.edges).toHaveLength(5);
    const next = await same(LIST, { first: 5, after: r.body.data.volumes.pageInfo.endCursor });
    expect(next.body.data.volumes.edges[0].node.id).not.toBe(r.body.data.volumes.edges[0].node.id);
    // Past east's 12 volumes the dead backend's part is missing, with its typed error.
    const all = await same(LIST, { first: 20 });
    expect(all.body.errors?.[0]?.extensions?.code).toBe('BACKEND_UNAVAILABLE');
    const after = await executions();
    expect((after['compiled/none'] ?? 0) - (before['compiled/none'] ?? 0)).toBe(3);
  });

  it('should answer a volume by id, a missing one as null and a bad id as BAD_USER_INPUT alike', async () => {
    const list = await same('{ volumes(first: 2) { nodes { id } } }');
    const id = list.body.data.volumes.nodes[0].id;
    const one = await same('query($id: ID!) { volume(id: $id) { id name attachments { state } } }', { id });
    expect(one.body.data.volume.id).toBe(id);
    const missing = Buffer.from(JSON.stringify(['Volume', 'east', 'default', 'nope'])).toString('base64url');
    expect((await same('query($id: ID!) { volume(id: $id) { id } }', { id: missing })).body.data.volume).toBeNull();
    expect((await same('query($id: ID!) { volume(id: $id) { id } }', { id: 'not-an-id' })).body.errors[0].extensions.code).toBe('BAD_USER_INPUT');
  });

  it('should refuse bad variables with graphql-js words, and a document over the cost limit, alike', async () => {
    const bad = await same(LIST, { first: 'five' });
    expect(bad.body.errors[0].extensions.code).toBe('BAD_USER_INPUT');
    expect(bad.body.errors[0].message).toContain('Variable "$first"');
    const unknown = await same('{ __typename }', undefined, auth);
    expect(unknown.status).toBe(200);
    const named = await Promise.all([compiled, interpreted].map((g) => fetch(g.gateway.url, { method: 'POST', headers: { 'content-type': 'application/json', ...auth }, body: JSON.stringify({ query: '{ __typename }', operationName: 'Nope' }) }).then(async (r) => ({ status: r.status, body: await r.json() }))));
    expect(named[0]).toEqual(named[1]);
    expect(named[0]!.body.errors[0].extensions.code).toBe('OPERATION_RESOLUTION_FAILURE');
    const missing = await same(LIST, {});
    expect(missing.body.errors[0].extensions.code).toBe('BAD_USER_INPUT');
    const costly = await same('{ volumes(first: 100) { nodes { id attachments { state } } } }');
    expect(costly.body.errors[0].extensions.code).toBe('COST_ESTIMATED_TOO_EXPENSIVE');
  });

  it('should stop at the response-size cap with one RESPONSE_TOO_LARGE and partial data, alike', async () => {
    const r = await same('{ volumes(first: 12) { nodes { id name backendStatus details { __typename ... on NomadVolumeDetails { externalId pluginId provider } } } } }', undefined, auth, capped);
    expect(r.body.data.volumes.nodes.length).toBeGreaterThan(0);
    expect(r.body.errors.filter((e: any) => e.extensions.code === 'RESPONSE_TOO_LARGE')).toHaveLength(1);
  });

  it('should run a federated trace request and a variable inside a literal on graphql-js, with the same answers', async () => {
    const before = await executions();
    const trace = await compiled.gql('{ volumes(first: 1) { nodes { id } } }', undefined, { ...auth, 'apollo-federation-include-trace': 'ftv1' });
    expect(typeof trace.body.extensions?.ftv1).toBe('string');
    const id = Buffer.from(JSON.stringify(['Volume', 'east', 'default', '..'])).toString('base64url');
    const entity = await same('query($id: ID!) { _entities(representations: [{ __typename: "Volume", id: $id }]) { ... on Volume { id } } }', { id });
    expect(entity.body.errors[0].extensions).toMatchObject({ code: 'BAD_USER_INPUT', argument: 'id (native id)' });
    const after = await executions();
    expect((after['graphql-js/ftv1-trace'] ?? 0) - (before['graphql-js/ftv1-trace'] ?? 0)).toBe(1);
    expect((after['graphql-js/nested-variable'] ?? 0) - (before['graphql-js/nested-variable'] ?? 0)).toBe(1);
  });
});
