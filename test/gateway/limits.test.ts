/**
 * Operation limits over HTTP against a real gateway and a real Nomad simulator: each limit
 * refuses with its own code before any backend call; the attacks are refused; the
 * standard introspection query still passes.
 */
import { getIntrospectionQuery } from 'graphql';
import type { NomadSimulator } from '../../simulators/nomad';
import { MGMT, disposeAll, seedVolumes, startGatewayFor, startNomad, type GatewayUnderTest } from '../support/harness';

const admin = { 'x-nomad-token': MGMT };
const GRAPHQL_RESPONSE = 'application/graphql-response+json';

/** POST with an explicit Accept; returns status, body and how long the answer took. */
async function post(
  gw: GatewayUnderTest,
  query: string,
  accept = GRAPHQL_RESPONSE,
  variables?: Record<string, unknown>,
): Promise<{ status: number; body: any; ms: number }> {
  const started = Date.now();
  const res = await fetch(gw.gateway.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept, ...admin },
    body: JSON.stringify({ query, variables }),
  });
  return { status: res.status, body: await res.json(), ms: Date.now() - started };
}

const codes = (body: any): string[] => (body.errors ?? []).map((e: any) => e.extensions?.code);
const aliases = (n: number, selection: string): string =>
  `{ ${Array.from({ length: n }, (_, i) => `a${i}: ${selection}`).join(' ')} }`;
/** `attachments { volume { attachments { volume { … id } } } }` nested `levels` times. */
const deepAttachments = (levels: number): string => {
  let inner = 'id';
  for (let i = 0; i < levels; i++) inner = `attachments { volume { ${inner} } }`;
  return `{ volumes(first: 50, filter: { backends: ["east"] }) { nodes { id ${inner} } } }`;
};

describe('operation limits (defaults)', () => {
  let sim: NomadSimulator;
  let gw: GatewayUnderTest;

  beforeAll(async () => {
    sim = await startNomad();
    seedVolumes(sim, 30);
    sim.placeAllocation({
      jobId: 'job-1',
      nodeId: 'node-1111',
      volumes: [
        { volumeId: 'vol-001', mode: 'write', accessMode: 'single-node-writer', attachmentMode: 'file-system' },
      ],
    });
    gw = await startGatewayFor([{ id: 'east', url: sim.url }]);
  });
  afterAll(disposeAll);
  beforeEach(() => sim.clearRequests());

  /** Refused with `code` (400 for graphql-response+json, 200 for application/json) and no backend call. */
  const expectRefused = async (
    query: string,
    code: string,
    extensions: Record<string, unknown> = {},
  ): Promise<void> => {
    const strict = await post(gw, query);
    expect({ status: strict.status, codes: codes(strict.body), data: strict.body.data }).toEqual({
      status: 400,
      codes: expect.arrayContaining([code]),
      data: undefined,
    });
    expect(strict.body.errors.find((e: any) => e.extensions.code === code).extensions).toMatchObject(extensions);
    const legacy = await post(gw, query, 'application/json');
    expect(legacy.status).toBe(200);
    expect(codes(legacy.body)).toContain(code);
    expect(sim.requests()).toEqual([]);
  };

  it('should refuse an operation deeper than 6 with MAX_DEPTH_LIMIT', async () => {
    await expectRefused(deepAttachments(3), 'MAX_DEPTH_LIMIT', { limit: 'maxDepth', max: 6, retryable: false });
  });

  it("should refuse the issue's 20-level attachments nesting and the server/volumeAttachments nesting", async () => {
    await expectRefused(deepAttachments(20), 'MAX_DEPTH_LIMIT');
    let servers = 'id';
    for (let i = 0; i < 10; i++)
      servers = `volumeAttachments { consumer { ... on VolumeServerConsumer { server { ${servers} } } } }`;
    await expectRefused(
      `{ serverVolumeAttachments(serverId: "x") { consumer { ... on VolumeServerConsumer { server { ${servers} } } } } }`,
      'MAX_DEPTH_LIMIT',
    );
  });

  it('should count fields, not fragments, toward the depth (the README operation block nests fragments)', async () => {
    const res = await post(
      gw,
      '{ volumes(first: 2) { nodes { attachments { consumer { ... on VolumeAllocationConsumer { jobId } } } } } }',
    );
    expect(res.body.errors).toBeUndefined();
  });

  it('should refuse more than 15 aliases with MAX_ALIASES_LIMIT', async () => {
    await expectRefused(aliases(16, 'volumes(first: 1) { nodes { id } }'), 'MAX_ALIASES_LIMIT', {
      limit: 'maxAliases',
      max: 15,
    });
    const ok = await post(gw, aliases(15, 'storageBackends { id }'));
    expect(ok.body.errors).toBeUndefined();
  });

  it('should refuse more than 50 directives with MAX_DIRECTIVES_LIMIT', async () => {
    await expectRefused(
      `{ storageBackends { ${Array.from({ length: 51 }, () => 'id @include(if: true)').join(' ')} } }`,
      'MAX_DIRECTIVES_LIMIT',
      { limit: 'maxDirectives', max: 50 },
    );
  });

  it('should refuse a document of more than 1000 tokens with MAX_TOKENS_LIMIT, and keep GRAPHQL_PARSE_FAILED for syntax errors', async () => {
    // `{ storageBackends { id id … } }`: 5 tokens around n fields.
    await expectRefused(`{ storageBackends { ${'id '.repeat(996)}} }`, 'MAX_TOKENS_LIMIT', {
      limit: 'maxTokens',
      max: 1000,
    });
    const atLimit = await post(gw, `{ storageBackends { ${'id '.repeat(995)}} }`);
    expect(codes(atLimit.body)).not.toContain('MAX_TOKENS_LIMIT');
    const syntax = await post(gw, `{ storageBackends { id ) ${'id '.repeat(2000)}} }`);
    expect(codes(syntax.body)).toEqual(['GRAPHQL_PARSE_FAILED']);
  });

  it("should refuse the issue's 1,000 aliases of volumes(first: 500) { nodes { id attachments { id } } } (at the token limit) without a backend call", async () => {
    await expectRefused(aliases(1000, 'volumes(first: 500) { nodes { id attachments { id } } }'), 'MAX_TOKENS_LIMIT');
  });

  it('should refuse an operation costing more than 5000 with COST_ESTIMATED_TOO_EXPENSIVE, variables included', async () => {
    // 5 (list read) + 1 (the connection) + 500 × (1 volume + 5 detail read + 5 × 1 attachment) = 5506.
    await expectRefused('{ volumes(first: 500) { nodes { id attachments { id } } } }', 'COST_ESTIMATED_TOO_EXPENSIVE', {
      limit: 'maxCost',
      max: 5000,
      found: 5506,
    });
    const q = 'query ($n: Int) { volumes(first: $n) { nodes { id attachments { id } } } }';
    const refused = await post(gw, q, GRAPHQL_RESPONSE, { n: 500 });
    expect({ status: refused.status, codes: codes(refused.body) }).toEqual({
      status: 400,
      codes: ['COST_ESTIMATED_TOO_EXPENSIVE'],
    });
    expect(sim.requests()).toEqual([]);
    const small = await post(gw, q, GRAPHQL_RESPONSE, { n: 10 });
    expect(small.body.errors).toBeUndefined();
    expect(small.body.data.volumes.nodes).toHaveLength(10);
  });

  it('should refuse 15 aliases of volumes(first: 100) with detail reads on cost', async () => {
    await expectRefused(
      aliases(15, 'volumes(first: 100) { nodes { id attachments { id } } }'),
      'COST_ESTIMATED_TOO_EXPENSIVE',
    );
  });

  it("should refuse the issue's 1,000 aliases of __schema at once and keep answering { __typename } meanwhile", async () => {
    const attack = aliases(1000, '__schema { types { name fields { name type { name ofType { name } } } } }');
    const attacks = Array.from({ length: 20 }, () => post(gw, attack));
    const typename = await post(gw, '{ __typename }');
    const answers = await Promise.all(attacks);
    for (const a of answers)
      expect({ status: a.status, codes: codes(a.body) }).toEqual({ status: 400, codes: ['MAX_TOKENS_LIMIT'] });
    expect(typename.body).toEqual({ data: { __typename: 'Query' } });
    // Functional, generous: the small query is not stuck behind the attacks.
    expect(typename.ms).toBeLessThan(5_000);
  });

  it('should answer the standard introspection query (every option on), which nests ofType past the depth limit', async () => {
    const q = getIntrospectionQuery({
      descriptions: true,
      specifiedByUrl: true,
      directiveIsRepeatable: true,
      schemaDescription: true,
      inputValueDeprecation: true,
      oneOf: true,
    });
    const res = await post(gw, q);
    expect(res.body.errors).toBeUndefined();
    expect(res.body.data.__schema.types.map((t: any) => t.name)).toContain('Volume');
    expect(res.body.data.__schema.directives.map((d: any) => d.name)).toEqual(
      expect.arrayContaining(['cost', 'listSize']),
    );
  });

  it('should refuse more than 3 introspection fields and nested type lists with MAX_INTROSPECTION_LIMIT', async () => {
    await expectRefused(aliases(4, '__schema { queryType { name } }'), 'MAX_INTROSPECTION_LIMIT', {
      limit: 'maxIntrospectionFields',
      max: 3,
      found: 4,
    });
    await expectRefused(
      '{ __schema { types { fields { type { fields { type { fields { name } } } } } } } }',
      'MAX_INTROSPECTION_LIMIT',
      { limit: 'introspectionTypeLists' },
    );
    const few = await post(gw, aliases(3, '__type(name: "Volume") { name }'));
    expect(few.body.errors).toBeUndefined();
  });
});

describe('operation limits with a raised token limit (each later limit still holds)', () => {
  let sim: NomadSimulator;
  let gw: GatewayUnderTest;

  beforeAll(async () => {
    sim = await startNomad();
    seedVolumes(sim, 5);
    gw = await startGatewayFor([{ id: 'east', url: sim.url }], {
      limits: { maxTokens: 1_000_000, maxAliases: 100_000 },
    });
  });
  afterAll(disposeAll);
  beforeEach(() => sim.clearRequests());

  it('should refuse 1,000 aliases of __schema with MAX_INTROSPECTION_LIMIT', async () => {
    const res = await post(
      gw,
      aliases(1000, '__schema { types { name fields { name type { name ofType { name } } } } }'),
    );
    expect({ status: res.status, codes: codes(res.body) }).toEqual({ status: 400, codes: ['MAX_INTROSPECTION_LIMIT'] });
  });

  it('should refuse 1,000 aliases of volumes(first: 500) on cost without a backend call', async () => {
    const res = await post(gw, aliases(1000, 'volumes(first: 500) { nodes { id attachments { id } } }'));
    expect({ status: res.status, codes: codes(res.body) }).toEqual({
      status: 400,
      codes: ['COST_ESTIMATED_TOO_EXPENSIVE'],
    });
    expect(sim.requests()).toEqual([]);
  });
});

describe('introspection switched off', () => {
  it('should refuse __schema and __type with INTROSPECTION_DISABLED and still answer __typename', async () => {
    const sim = await startNomad();
    const gw = await startGatewayFor([{ id: 'east', url: sim.url }], { limits: { introspection: false } });
    try {
      for (const q of ['{ __schema { queryType { name } } }', '{ __type(name: "Volume") { name } }']) {
        const res = await post(gw, q);
        expect({ status: res.status, codes: codes(res.body) }).toEqual({
          status: 400,
          codes: ['INTROSPECTION_DISABLED'],
        });
      }
      expect((await post(gw, '{ __typename }')).body).toEqual({ data: { __typename: 'Query' } });
    } finally {
      await disposeAll();
    }
  });
});
