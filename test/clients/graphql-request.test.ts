/**
 * graphql-request 7 against the gateway over HTTP, as docs/clients.md configures it: its default
 * (POST with JSON), and queries as GET (`method: 'GET'`, anonymous or with a token: the anonymous
 * GET got a 400 about CSRF before issue 31).
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
