/**
 * Trusted documents (TRUSTED_DOCUMENTS): only listed documents run, named by `documentId` or
 * `extensions.persistedQuery.sha256Hash`, or sent as their exact text unless ids are required.
 * Against a real gateway and simulator; refused requests make no backend call.
 */
import { createHash } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../../server/config';
import { ConfigError } from '../../adapters/contract/settings';
import { loadHttpEdgeConfig } from '../../server/http/config';
import type { NomadSimulator } from '../../simulators/nomad';
import { MGMT, disposeAll, seedVolumes, startGatewayFor, startNomad, type GatewayUnderTest } from '../support/harness';

const sha = (s: string): string => createHash('sha256').update(s).digest('hex');
const LIST = 'query ListVolumes($n: Int!) { volumes(first: $n) { nodes { nativeId } } }';
const BACKENDS = 'query Backends { storageBackends { id } }';
const OTHER = '{ volumes(first: 5) { nodes { nativeId name } } }';

const dir = mkdtempSync(join(tmpdir(), 'trusted-'));
const file = (name: string, content: unknown): string => {
  const p = join(dir, name);
  writeFileSync(p, typeof content === 'string' ? content : JSON.stringify(content));
  return p;
};
const manifest = file('manifest.json', {
  format: 'apollo-persisted-query-manifest',
  version: 1,
  operations: [
    { id: sha(LIST), name: 'ListVolumes', type: 'query', body: LIST },
    { id: sha(BACKENDS), name: 'Backends', type: 'query', body: BACKENDS },
  ],
});

let sim: NomadSimulator;
let gw: GatewayUnderTest;
const auth = { 'x-nomad-token': MGMT };

async function post(g: GatewayUnderTest, body: Record<string, unknown>): Promise<{ status: number; body: any }> {
  const res = await fetch(g.gateway.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...auth },
    body: JSON.stringify(body),
  });
  return { status: res.status, body: await res.json() };
}

beforeAll(async () => {
  sim = await startNomad();
  seedVolumes(sim, 3);
  gw = await startGatewayFor([{ id: 'east', url: sim.url }], {
    http: { trustedDocuments: loadHttpEdgeConfig({ TRUSTED_DOCUMENTS: manifest }, {}).trustedDocuments },
  });
});
beforeEach(() => sim.clearRequests());
afterAll(disposeAll);

describe('trusted documents on (Apollo manifest)', () => {
  it.each([
    ['documentId (bare SHA-256)', { documentId: sha(LIST) }],
    ['documentId (sha256: prefix, GraphQL over HTTP persisted documents)', { documentId: `sha256:${sha(LIST)}` }],
    ['extensions.persistedQuery.sha256Hash', { extensions: { persistedQuery: { version: 1, sha256Hash: sha(LIST) } } }],
    ['its exact text as query', { query: LIST }],
  ])('should run a listed document named by %s', async (_, params) => {
    const r = await post(gw, { ...params, variables: { n: 2 } });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ data: { volumes: { nodes: [{ nativeId: 'vol-000' }, { nativeId: 'vol-001' }] } } });
  });

  it('should run a listed document by documentId over GET', async () => {
    const res = await fetch(`${gw.gateway.url}?documentId=${sha(BACKENDS)}`, {
      headers: { 'apollo-require-preflight': 'true' },
    });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ data: { storageBackends: [{ id: 'east' }] } });
  });

  it('should refuse a document that is not listed with 400 PERSISTED_QUERY_NOT_IN_LIST, before any backend call', async () => {
    const r = await post(gw, { query: OTHER });
    expect(r.status).toBe(400);
    expect(r.body).toEqual({
      errors: [
        {
          message: 'this gateway serves trusted documents only, and this document is not one of them',
          extensions: { code: 'PERSISTED_QUERY_NOT_IN_LIST' },
        },
      ],
    });
    // A listed text changed by one character is another document.
    expect((await post(gw, { query: `${LIST} `, variables: { n: 1 } })).body.errors[0].extensions.code).toBe(
      'PERSISTED_QUERY_NOT_IN_LIST',
    );
    expect(sim.requests()).toEqual([]);
  });

  it('should not let an automatic persisted query register a document around the list', async () => {
    const register = await post(gw, {
      query: OTHER,
      extensions: { persistedQuery: { version: 1, sha256Hash: sha(OTHER) } },
    });
    expect(register.body.errors[0].extensions.code).toBe('PERSISTED_QUERY_NOT_IN_LIST');
    const byHash = await post(gw, { extensions: { persistedQuery: { version: 1, sha256Hash: sha(OTHER) } } });
    expect(byHash.status).toBe(200);
    expect(byHash.body.errors[0].extensions.code).toBe('PERSISTED_QUERY_NOT_FOUND');
    expect(byHash.body.data).toBeUndefined();
    expect(sim.requests()).toEqual([]);
  });

  it('should answer an unknown documentId with 400 PERSISTED_QUERY_NOT_FOUND, and documentId with query with 400 BAD_REQUEST', async () => {
    const unknown = await post(gw, { documentId: sha(OTHER) });
    expect(unknown.status).toBe(400);
    expect(unknown.body.errors[0].extensions.code).toBe('PERSISTED_QUERY_NOT_FOUND');
    const both = await post(gw, { documentId: sha(LIST), query: LIST });
    expect(both.status).toBe(400);
    expect(both.body.errors[0].extensions.code).toBe('BAD_REQUEST');
  });
});

describe('trusted documents with ids required (plain map)', () => {
  let strict: GatewayUnderTest;
  beforeAll(async () => {
    const map = file('map.json', { listBackends: BACKENDS, [sha(LIST)]: LIST });
    const config = loadConfig({
      GATEWAY_BACKENDS: `east=nomad@${sim.url}`,
      TRUSTED_DOCUMENTS: map,
      TRUSTED_DOCUMENTS_REQUIRE_ID: 'true',
    });
    expect(config.http.trustedDocuments?.requireId).toBe(true);
    strict = await startGatewayFor([{ id: 'east', url: sim.url }], { http: config.http });
  });

  it('should run documents by their map id or hash, and refuse their text with 400 PERSISTED_QUERY_ID_REQUIRED', async () => {
    expect((await post(strict, { documentId: 'listBackends' })).body).toEqual({
      data: { storageBackends: [{ id: 'east' }] },
    });
    expect((await post(strict, { documentId: sha(BACKENDS) })).body).toEqual({
      data: { storageBackends: [{ id: 'east' }] },
    });
    const text = await post(strict, { query: BACKENDS });
    expect(text.status).toBe(400);
    expect(text.body.errors[0].extensions.code).toBe('PERSISTED_QUERY_ID_REQUIRED');
  });
});

describe('trusted documents settings', () => {
  it.each([
    ['a missing file', join(dir, 'absent.json'), /cannot read .*ENOENT/],
    ['a file that is not JSON', file('bad.json', '{ nope'), /is not valid JSON/],
    [
      'an unknown format',
      file('format.json', { format: 'relay', version: 1, operations: [] }),
      /unknown format "relay"/,
    ],
    [
      'an operation without a body',
      file('nobody.json', {
        format: 'apollo-persisted-query-manifest',
        version: 1,
        operations: [{ id: 'x', name: 'X', type: 'query' }],
      }),
      /operations\[0\]\.body must be a non-empty string/,
    ],
    ['an empty list', file('empty.json', {}), /holds no documents/],
  ])('should refuse %s naming TRUSTED_DOCUMENTS', (_, path, why) => {
    let err: unknown;
    try {
      loadHttpEdgeConfig({ TRUSTED_DOCUMENTS: path }, {});
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as ConfigError).setting).toBe('TRUSTED_DOCUMENTS');
    expect((err as Error).message).toMatch(why);
  });

  it('should read the file key http.trustedDocuments and be off without it', () => {
    expect(
      loadHttpEdgeConfig({}, { http: { trustedDocuments: { path: manifest } } }).trustedDocuments?.documents.size,
    ).toBe(2);
    expect(() => loadHttpEdgeConfig({}, { http: { trustedDocuments: { path: manifest, requireId: 'yes' } } })).toThrow(
      /^http\.trustedDocuments\.requireId: /,
    );
    expect(loadHttpEdgeConfig({}, {}).trustedDocuments).toBeUndefined();
  });
});
