/**
 * Issue 19 item 5: a credential header counts as a CSRF preflight (browsers send custom headers
 * cross-site only after one), so urql's default GET is served; a request a page could send
 * without a preflight (a link's GET, a form's POST) is still refused.
 */
import { perBackendHeader } from '../../adapters/contract/module';
import { BACKEND_MODULES } from '../../server/kinds';
import { disposeAll, seedVolumes, startGatewayFor, startNomad, type GatewayUnderTest } from '../support/harness';

let gw: GatewayUnderTest;
const QUERY = '{ storageBackends { id } }';
/** What urql sends by default for a query (`preferGetMethod: 'within-url-limit'`). */
const URQL_ACCEPT =
  'application/graphql-response+json, application/graphql+json, application/json, text/event-stream, multipart/mixed';

beforeAll(async () => {
  const sim = await startNomad();
  seedVolumes(sim, 1);
  gw = await startGatewayFor([{ id: 'east', url: sim.url }]);
});
afterAll(disposeAll);

const get = (headers: Record<string, string>) =>
  fetch(`${gw.gateway.url}?query=${encodeURIComponent(QUERY)}`, { headers: { accept: URQL_ACCEPT, ...headers } });

it.each(BACKEND_MODULES.map((m) => [m.credential.header, m] as const))(
  "should serve urql's GET carrying %s, shared or per backend",
  async (_h, m) => {
    for (const header of [m.credential.header, perBackendHeader(m.credential, 'east')]) {
      const res = await get({ [header]: 'some-token' });
      expect({ header, status: res.status }).toEqual({ header, status: 200 });
      expect(await res.json()).toEqual({ data: { storageBackends: [{ id: 'east' }] } });
    }
  },
);

it('should still refuse a GET without a preflight-forcing header, or with an empty credential header', async () => {
  for (const headers of [{}, { [BACKEND_MODULES[0]!.credential.header]: '' }]) {
    const res = await get(headers);
    expect(res.status).toBe(400);
    expect(await res.text()).toMatch(/CSRF/);
  }
});

it('should refuse a form POST without a credential header and serve it with one', async () => {
  const post = (headers: Record<string, string>) =>
    fetch(gw.gateway.url, {
      method: 'POST',
      headers: { 'content-type': 'text/plain', ...headers },
      body: JSON.stringify({ query: QUERY }),
    });
  const bare = await post({});
  expect(bare.status).toBe(400);
  expect(await bare.text()).toMatch(/CSRF/);
  // Past CSRF prevention; a text/plain body is then not GraphQL parameters (400 without the CSRF text).
  const credentialed = await post({ [BACKEND_MODULES[0]!.credential.header]: 'some-token' });
  expect(await credentialed.text()).not.toMatch(/CSRF/);
});
