/**
 * graphql-request 7 against the gateway over HTTP, as docs/clients.md configures it: its default
 * (POST with JSON), queries as GET (`method: 'GET'`, anonymous or with a token: the anonymous GET
 * got a 400 about CSRF before issue 31), and `batchRequests` (one POST holding an array, served as
 * HTTP batching since issue 31).
 */
import { disposeAll, MGMT, seedVolumes, startGatewayFor, startNomad, type GatewayUnderTest } from '../support/harness';

const VOLUMES = '{ volumes(first: 2) { nodes { name } } }';
const NAMES = { volumes: { nodes: [{ name: 'vol 0' }, { name: 'vol 1' }] } };

/** The package is ESM with a CommonJS build that TypeScript's resolution does not see: loaded as Jest loads it. */
type GraphQLRequest = typeof import('graphql-request', { with: { 'resolution-mode': 'import' } });
let gr: GraphQLRequest;
let gw: GatewayUnderTest;
const CALLERS: Array<Record<string, string>> = [{}, { 'X-Nomad-Token': MGMT }];
/** The methods graphql-request used. */
const methods: string[] = [];
const recording: typeof fetch = (input, init) => {
  methods.push(init?.method ?? 'GET');
  return fetch(input, init);
};

beforeAll(async () => {
  gr = await import('graphql-request');
  const sim = await startNomad({ acl: { enabled: true, anonymousRead: '*' } });
  seedVolumes(sim, 2);
  gw = await startGatewayFor([{ id: 'east', url: sim.url }]);
});
afterAll(disposeAll);
beforeEach(() => void (methods.length = 0));

it('should serve the default configuration (POST with JSON), anonymous or with a token', async () => {
  for (const headers of CALLERS) {
    const client = new gr.GraphQLClient(gw.gateway.url, { headers, fetch: recording });
    expect(await client.request(VOLUMES)).toEqual(NAMES);
  }
  expect(methods).toEqual(['POST', 'POST']);
});

it("should serve queries as GET (`method: 'GET'`), anonymous or with a token", async () => {
  for (const headers of CALLERS) {
    const client = new gr.GraphQLClient(gw.gateway.url, { method: 'GET', headers, fetch: recording });
    expect(await client.request(VOLUMES)).toEqual(NAMES);
  }
  expect(methods).toEqual(['GET', 'GET']);
});

it("should serve a client's batchRequests as one POST, each answer in its place, and an error in its own place", async () => {
  const client = new gr.GraphQLClient(gw.gateway.url, { headers: { 'X-Nomad-Token': MGMT }, fetch: recording });
  const answers = await client.batchRequests([{ document: VOLUMES }, { document: '{ storageBackends { id } }' }]);
  expect(methods).toEqual(['POST']);
  expect(answers.map((a) => a.data)).toEqual([NAMES, { storageBackends: [{ id: 'east' }] }]);
  // graphql-request rejects a batch in which any answer has errors, with every answer attached.
  const failed = await client
    .batchRequests([{ document: '{ storageBackends { id } }' }, { document: '{ nope }' }])
    .catch((err: unknown) => err);
  expect(failed).toBeInstanceOf(gr.ClientError);
  const results = (failed as InstanceType<GraphQLRequest['ClientError']>).response as unknown as Record<
    number,
    { data?: unknown; errors?: any[] }
  >;
  expect(results[0]).toEqual({ data: { storageBackends: [{ id: 'east' }] } });
  expect(results[1]!.errors![0].extensions.code).toBe('GRAPHQL_VALIDATION_FAILED');
});
