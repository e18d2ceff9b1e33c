/**
 * CSRF prevention (server/http/csrf.ts, `CSRF_PREVENTION`) over raw HTTP, in each mode:
 * - `standard` (issue 31, item 2): a GET is served, anonymous or with a credential header (a GET
 *   cannot run a mutation; an anonymous one reveals what anonymous access reveals); a POST that a
 *   page could send without a preflight (form or `text/plain`) is refused unless it carries a
 *   credential header (issue 19 item 5: custom, so it proves a preflight) or Apollo's header;
 * - `strict` (behind a proxy that turns cookies into credential headers): a credential header
 *   proves nothing, so a GET carrying one needs Apollo's header or a JSON content-type;
 * - `off`: nothing is refused.
 * The real clients' configurations: test/clients/.
 */
import { perBackendHeader } from '../../adapters/contract/module';
import type { CsrfMode } from '../../server/http/csrf';
import { BACKEND_MODULES } from '../../server/kinds';
import { disposeAll, seedVolumes, startGatewayFor, startNomad, type GatewayUnderTest } from '../support/harness';

const gw: Partial<Record<CsrfMode, GatewayUnderTest>> = {};
const QUERY = '{ storageBackends { id } }';
const SERVED = { data: { storageBackends: [{ id: 'east' }] } };
/** What urql sends by default for a query (`preferGetMethod: 'within-url-limit'`). */
const URQL_ACCEPT =
  'application/graphql-response+json, application/graphql+json, application/json, text/event-stream, multipart/mixed';
const TOKEN = { [BACKEND_MODULES[0]!.credential.header]: 'some-token' };

beforeAll(async () => {
  const sim = await startNomad({ acl: { enabled: true, anonymousRead: '*' } });
  seedVolumes(sim, 1);
  for (const mode of ['standard', 'strict', 'off'] as const)
    gw[mode] = await startGatewayFor([{ id: 'east', url: sim.url }], { http: { csrfPrevention: mode } });
});
afterAll(disposeAll);

const get = (mode: CsrfMode, headers: Record<string, string>) =>
  fetch(`${gw[mode]!.gateway.url}?query=${encodeURIComponent(QUERY)}`, {
    headers: { accept: URQL_ACCEPT, ...headers },
  });
/** A form's or a `text/plain` POST: what a page sends cross-site without a preflight. */
const simplePost = (mode: CsrfMode, headers: Record<string, string>) =>
  fetch(gw[mode]!.gateway.url, {
    method: 'POST',
    headers: { 'content-type': 'text/plain; charset=json', ...headers },
    body: JSON.stringify({ query: QUERY }),
  });

const refusal = async (res: Response) => ({
  status: res.status,
  code: (await res.json()).errors?.[0]?.extensions?.code,
});
const CSRF = { status: 400, code: 'CSRF_PREFLIGHT_REQUIRED' };

describe('standard (the default)', () => {
  it('should serve an anonymous GET without any preflight-forcing header', async () => {
    for (const headers of [{}, { [BACKEND_MODULES[0]!.credential.header]: '' }]) {
      const res = await get('standard', headers);
      expect(res.status).toBe(200);
      expect(await res.json()).toEqual(SERVED);
    }
  });

  it.each(BACKEND_MODULES.map((m) => [m.credential.header, m] as const))(
    'should serve a GET carrying %s, shared or per backend',
    async (_h, m) => {
      for (const header of [m.credential.header, perBackendHeader(m.credential, 'east')]) {
        const res = await get('standard', { [header]: 'some-token' });
        expect({ header, status: res.status }).toEqual({ header, status: 200 });
        expect(await res.json()).toEqual(SERVED);
      }
    },
  );

  it('should refuse a simple POST without a credential or preflight header, and pass it with one', async () => {
    expect(await refusal(await simplePost('standard', {}))).toEqual(CSRF);
    for (const headers of [TOKEN, { 'apollo-require-preflight': 'true' }, { 'x-apollo-operation-name': 'Q' }]) {
      const res = await simplePost('standard', headers);
      expect({ headers, status: res.status }).toEqual({ headers, status: 200 });
      expect(await res.json()).toEqual(SERVED);
    }
  });

  it('should never run a mutation over GET', async () => {
    const res = await fetch(`${gw.standard!.gateway.url}?query=${encodeURIComponent('mutation { __typename }')}`);
    expect(res.status).toBe(405);
  });
});

describe('strict', () => {
  it('should serve an anonymous GET, and a GET with a credential only with a preflight-forcing header', async () => {
    expect((await get('strict', {})).status).toBe(200);
    expect(await refusal(await get('strict', TOKEN))).toEqual(CSRF);
    const signs: Array<Record<string, string>> = [
      { 'apollo-require-preflight': 'true' },
      { 'content-type': 'application/json' },
    ];
    for (const headers of signs) {
      const res = await get('strict', { ...TOKEN, ...headers });
      expect({ headers, status: res.status }).toEqual({ headers, status: 200 });
    }
  });

  it('should refuse a simple POST even with a credential header', async () => {
    expect(await refusal(await simplePost('strict', TOKEN))).toEqual(CSRF);
    expect((await simplePost('strict', { ...TOKEN, 'apollo-require-preflight': 'true' })).status).toBe(200);
  });
});

describe('off', () => {
  it('should refuse nothing', async () => {
    expect((await get('off', TOKEN)).status).toBe(200);
    const res = await simplePost('off', {});
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual(SERVED);
  });
});
