/**
 * Issue 31, item 2: CORS preflights as browsers send them. A listed origin may send the headers
 * browser apps add (trace context, Apollo's client awareness and preflight headers), and a preflight
 * is always answered by CORS: from an origin the gateway does not list, a `403`
 * `ORIGIN_NOT_ALLOWED`, never GraphQL's CSRF refusal. Demo mode's own preflights: test/browser/cors.test.ts.
 */
import { BROWSER_HEADER_VALUES, BROWSER_HEADERS, preflightAnswer } from '../support/cors';
import { disposeAll, seedVolumes, startGatewayFor, startNomad, type GatewayUnderTest } from '../support/harness';

const APP = 'https://app.example.com';

let listed: GatewayUnderTest;
let off: GatewayUnderTest;

beforeAll(async () => {
  const sim = await startNomad();
  seedVolumes(sim, 1);
  listed = await startGatewayFor([{ id: 'east', url: sim.url }], { http: { cors: { origins: [APP] } } });
  off = await startGatewayFor([{ id: 'east', url: sim.url }]);
});
afterAll(disposeAll);

it("should allow a listed origin the headers browser apps send, beside the gateway's own", async () => {
  const asked = [...BROWSER_HEADERS, 'content-type', 'x-nomad-token-east', 'x-request-id'];
  const p = await preflightAnswer(listed.gateway.url, APP, asked);
  expect(p).toMatchObject({ status: 204, allowOrigin: APP });
  expect(p.allowed).toEqual(expect.arrayContaining(asked));
  // The page's real request then carries them and is served.
  const r = await fetch(listed.gateway.url, {
    method: 'POST',
    headers: { origin: APP, 'content-type': 'application/json', ...BROWSER_HEADER_VALUES },
    body: JSON.stringify({ query: '{ storageBackends { id } }' }),
  });
  expect([r.status, r.headers.get('access-control-allow-origin')]).toEqual([200, APP]);
  expect(await r.json()).toEqual({ data: { storageBackends: [{ id: 'east' }] } });
});

it('should answer a preflight from an origin it does not list with ORIGIN_NOT_ALLOWED, not a CSRF refusal', async () => {
  for (const [gw, origin] of [
    [off, APP],
    [listed, 'https://evil.example.net'],
  ] as const) {
    const p = await preflightAnswer(gw.gateway.url, origin, BROWSER_HEADERS);
    expect(p).toMatchObject({ origin, status: 403, allowOrigin: null });
    expect(p.text).not.toMatch(/CSRF/);
    expect(JSON.parse(p.text).errors[0].extensions.code).toBe('ORIGIN_NOT_ALLOWED');
  }
});
