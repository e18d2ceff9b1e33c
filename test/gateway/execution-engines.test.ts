/**
 * Compiled execution (graphql-jit behind Apollo's executor hook) answers exactly as graphql-js:
 * two gateways over the same simulator, one per engine, get the same documents and must send
 * the same status and body (errors in any order: GraphQL does not order them): data, partial
 * results with typed errors, bad variables, the response-size cap, the cost limit. The compiled gateway's `gateway_executions_total` shows
 * which ran compiled and why a request went to graphql-js (federated traces, variables inside
 * literals). The harness compiles a document at its first sighting; with the shipped default the
 * first runs on graphql-js and the second compiled, trusted documents excepted, and the compiled
 * documents kept stay within their byte budget (issue 27, item 2; the flood itself:
 * test/fuzz/unique-documents.test.ts).
 */
import { TrustedDocuments } from '../../server/http/trusted-documents';
import type { NomadSimulator } from '../../simulators/nomad';
import {
  MGMT,
  closedPortUrl,
  disposeAll,
  seedVolumes,
  startGatewayFor,
  startNomad,
  type GatewayUnderTest,
} from '../support/harness';

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
  capped = [
    await startGatewayFor(backends, { executionEngine: 'compiled', limits: small }),
    await startGatewayFor(backends, { executionEngine: 'graphql-js', limits: small }),
  ];
});
afterAll(disposeAll);

/** `gateway_executions_total` by `engine/reason`, and the compiled-document series by their line (`gateway_compiled_documents{trusted="false"}` …). */
async function executions(g: GatewayUnderTest = compiled): Promise<Record<string, number>> {
  const text = await (await fetch(new URL('/metrics', g.gateway.url))).text();
  const out: Record<string, number> = {};
  for (const m of text.matchAll(/^gateway_executions_total\{engine="([^"]+)",reason="([^"]+)"\} (\d+)/gm))
    out[`${m[1]}/${m[2]}`] = Number(m[3]);
  for (const m of text.matchAll(/^(gateway_compiled_documents\S*) (\S+)$/gm)) out[m[1]!] = Number(m[2]);
  return out;
}

/** How each series of `before` changed in `after` (series not in `before` count from 0). */
const ran = (before: Record<string, number>, after: Record<string, number>): Record<string, number> =>
  Object.fromEntries(
    Object.entries(after)
      .filter(
        ([k]) => !k.startsWith('gateway_compiled_documents{') && !k.startsWith('gateway_compiled_documents_bytes'),
      )
      .map(([k, v]): [string, number] => [k, v - (before[k] ?? 0)])
      .filter(([, d]) => d !== 0),
  );

const inOrder = (r: { status: number; body: any }): unknown => {
  const errors =
    r.body.errors && [...r.body.errors].sort((x: any, y: any) => (JSON.stringify(x) < JSON.stringify(y) ? -1 : 1));
  return { ...r, body: { ...r.body, ...(errors ? { errors } : {}) } };
};

/** Both gateways' answers to the same request, which must be equal. */
async function same(
  query: string,
  variables?: Record<string, unknown>,
  headers: Record<string, string> = auth,
  pair: [GatewayUnderTest, GatewayUnderTest] = [compiled, interpreted],
): Promise<{ status: number; body: any }> {
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
    expect(
      (await same('query($id: ID!) { volume(id: $id) { id } }', { id: 'not-an-id' })).body.errors[0].extensions.code,
    ).toBe('BAD_USER_INPUT');
  });

  it('should refuse bad variables with graphql-js words, and a document over the cost limit, alike', async () => {
    const bad = await same(LIST, { first: 'five' });
    expect(bad.body.errors[0].extensions.code).toBe('BAD_USER_INPUT');
    expect(bad.body.errors[0].message).toContain('Variable "$first"');
    const unknown = await same('{ __typename }', undefined, auth);
    expect(unknown.status).toBe(200);
    const named = await Promise.all(
      [compiled, interpreted].map((g) =>
        fetch(g.gateway.url, {
          method: 'POST',
          headers: { 'content-type': 'application/json', ...auth },
          body: JSON.stringify({ query: '{ __typename }', operationName: 'Nope' }),
        }).then(async (r) => ({ status: r.status, body: await r.json() })),
      ),
    );
    expect(named[0]).toEqual(named[1]);
    expect(named[0]!.body.errors[0].extensions.code).toBe('OPERATION_RESOLUTION_FAILURE');
    const missing = await same(LIST, {});
    expect(missing.body.errors[0].extensions.code).toBe('BAD_USER_INPUT');
    const costly = await same('{ volumes(first: 100) { nodes { id attachments { state } } } }');
    expect(costly.body.errors[0].extensions.code).toBe('COST_ESTIMATED_TOO_EXPENSIVE');
  });

  it('should stop at the response-size cap with one RESPONSE_TOO_LARGE and partial data, alike', async () => {
    const r = await same(
      '{ volumes(first: 12) { nodes { id name backendStatus details { __typename ... on NomadVolumeDetails { externalId pluginId provider } } } } }',
      undefined,
      auth,
      capped,
    );
    expect(r.body.data.volumes.nodes.length).toBeGreaterThan(0);
    expect(r.body.errors.filter((e: any) => e.extensions.code === 'RESPONSE_TOO_LARGE')).toHaveLength(1);
  });

  it('should run a federated trace request and a variable inside a literal on graphql-js, with the same answers', async () => {
    const before = await executions();
    const trace = await compiled.gql('{ volumes(first: 1) { nodes { id } } }', undefined, {
      ...auth,
      'apollo-federation-include-trace': 'ftv1',
    });
    expect(typeof trace.body.extensions?.ftv1).toBe('string');
    const id = Buffer.from(JSON.stringify(['Volume', 'east', 'default', '..'])).toString('base64url');
    const entity = await same(
      'query($id: ID!) { _entities(representations: [{ __typename: "Volume", id: $id }]) { ... on Volume { id } } }',
      { id },
    );
    expect(entity.body.errors[0].extensions).toMatchObject({ code: 'BAD_USER_INPUT', argument: 'id (native id)' });
    const after = await executions();
    expect((after['graphql-js/ftv1-trace'] ?? 0) - (before['graphql-js/ftv1-trace'] ?? 0)).toBe(1);
    expect((after['graphql-js/nested-variable'] ?? 0) - (before['graphql-js/nested-variable'] ?? 0)).toBe(1);
  });
});

describe('compiled documents: compiled at the second sighting, kept within a byte budget', () => {
  const ONE = `query One($id: ID!) { volume(id: $id) { id name status } }`;
  const ID = Buffer.from(JSON.stringify(['Volume', 'east', 'default', 'vol-001'])).toString('base64url');
  /** A list of east's volumes, new text for every `tag`: about 40 KiB compiled. */
  const list = (tag: string): string =>
    `{ volumes(first: 3, filter: { backends: ["east"], name: "${tag}" }) { nodes { id name status sizeBytes } } }`;
  /** 15 aliased lists: about 600 KiB compiled, over an eighth of 1 MiB. */
  const wide = `{ ${Array.from({ length: 15 }, (_, a) => `a${a}: volumes(first: 1, filter: { backends: ["east"], name: "w${a}" }) { nodes { id name status sizeBytes namespace nativeId backendStatus createdAt updatedAt } }`).join(' ')} }`;
  let seen: GatewayUnderTest;
  let small: GatewayUnderTest;
  let trusted: GatewayUnderTest;

  beforeAll(async () => {
    const east = [{ id: 'east', url: sim.url }];
    seen = await startGatewayFor(east, { executionEngine: 'compiled', compiledDocumentsSightings: 2 });
    small = await startGatewayFor(east, { executionEngine: 'compiled', compiledDocumentsMaxBytes: 1_048_576 });
    trusted = await startGatewayFor(east, {
      executionEngine: 'compiled',
      compiledDocumentsSightings: 2,
      http: { trustedDocuments: { documents: TrustedDocuments.fromJson({ one: ONE }) } },
    });
  });

  it('should run a document on graphql-js at its first sighting and compiled from the second, with the same answers', async () => {
    const before = await executions(seen);
    const answers = [];
    for (let i = 0; i < 3; i++) answers.push(await seen.gql(ONE, { id: ID }, auth));
    expect(answers[0]!.body.data.volume.id).toBe(ID);
    expect(answers[1]).toEqual(answers[0]);
    expect(answers[2]).toEqual(answers[0]);
    // Each operation of a text is sighted on its own.
    const both = `${ONE} query Two { volumes(first: 1) { nodes { id } } }`;
    const named = async (operationName: string): Promise<any> =>
      (
        await fetch(seen.gateway.url, {
          method: 'POST',
          headers: { 'content-type': 'application/json', ...auth },
          body: JSON.stringify({ query: both, variables: { id: ID }, operationName }),
        })
      ).json();
    expect((await named('One')).data.volume.id).toBe(ID);
    expect((await named('Two')).data.volumes.nodes).toHaveLength(1);
    expect((await named('One')).data.volume.id).toBe(ID);
    const after = await executions(seen);
    expect(ran(before, after)).toEqual({ 'graphql-js/first-sighting': 3, 'compiled/none': 3 });
    expect(after['gateway_compiled_documents{trusted="false"}']).toBe(2);
  });

  it('should keep at most its budget, least recently used out first, and run a document over an eighth of it on graphql-js', async () => {
    const before = await executions(small);
    for (let i = 0; i < 40; i++) expect((await small.gql(list(`l${i}`), undefined, auth)).status).toBe(200);
    const full = await executions(small);
    expect(full['gateway_compiled_documents_bytes{trusted="false"}']).toBeGreaterThan(1_048_576 / 2);
    expect(full['gateway_compiled_documents_bytes{trusted="false"}']).toBeLessThanOrEqual(1_048_576);
    expect(full['gateway_compiled_documents_evicted_total']).toBeGreaterThan(0);
    // The latest is still kept (compiled again); the first was dropped (compiled anew, dropping another).
    await small.gql(list('l39'), undefined, auth);
    const kept = await executions(small);
    expect(kept['gateway_compiled_documents_evicted_total']).toBe(full['gateway_compiled_documents_evicted_total']);
    await small.gql(list('l0'), undefined, auth);
    expect((await executions(small))['gateway_compiled_documents_evicted_total']).toBeGreaterThan(
      kept['gateway_compiled_documents_evicted_total']!,
    );
    // Too large to keep: answered by graphql-js, twice, and never counted in the budget.
    const answers = [await small.gql(wide, undefined, auth), await small.gql(wide, undefined, auth)];
    expect(answers[0]!.body.data.a14.nodes).toEqual([]);
    expect(answers[1]).toEqual(answers[0]);
    const after = await executions(small);
    expect(ran(before, after)).toMatchObject({ 'compiled/none': 42, 'graphql-js/too-large': 2 });
    expect(after['gateway_compiled_documents_bytes{trusted="false"}']).toBeLessThanOrEqual(1_048_576);
  });

  it('should compile a trusted document at its first sighting and keep it outside the budget', async () => {
    const before = await executions(trusted);
    const r = await trusted.gql(ONE, { id: ID }, auth);
    expect(r.body.data.volume.id).toBe(ID);
    const after = await executions(trusted);
    expect(ran(before, after)).toEqual({ 'compiled/none': 1 });
    expect(after['gateway_compiled_documents{trusted="true"}']).toBe(1);
    expect(after['gateway_compiled_documents_bytes{trusted="true"}']).toBeGreaterThan(0);
    expect(after['gateway_compiled_documents{trusted="false"}']).toBe(0);
  });
});
