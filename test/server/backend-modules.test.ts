/**
 * Issue 18, item 1: what the gateway knows about a kind comes from its module. Every case loops
 * over the registry, so a new backend's module is checked the same way: its credential header
 * (shared and per-backend) is read, allowed by CORS, redacted and shown in GraphiQL and /live;
 * its kind is parsed through the registry; its URL is required when it needs one.
 */
import { perBackendHeader } from '../../adapters/contract/module';
import { BACKEND_MODULES } from '../../server/kinds';
import { ConfigError, loadConfig } from '../../server/config';
import { credentialsFromHeaders, isCredentialHeader } from '../../server/credentials';
import { DEFAULT_HEADERS } from '../../server/graphiql';
import { REDACTED_PATHS } from '../../server/logger';
import { renderLivePage } from '../../server/live/page';
import type { BackendRegistry } from '../../domain/registry';
import { disposeAll, startGatewayFor, startNomad } from '../support/harness';

afterAll(disposeAll);

const kinds = BACKEND_MODULES.map((m) => [m.kind, m] as const);

/** Two backends of every kind, by id; only `all` is read by credentialsFromHeaders. */
const registry = { all: BACKEND_MODULES.flatMap((m) => [`${m.kind}-a`, `${m.kind}-b`].map((id) => ({ id, kind: m.modelKind }))) } as unknown as BackendRegistry;

describe.each(kinds)('the %s module', (kind, m) => {
  it('should give its backends the shared header and let the per-backend header win', () => {
    const creds = credentialsFromHeaders({ [m.credential.header.toLowerCase()]: 'shared', [perBackendHeader(m.credential, `${kind}-b`).toLowerCase()]: 'own' }, registry);
    expect(creds.get(`${kind}-a`)).toEqual({ token: 'shared' });
    expect(creds.get(`${kind}-b`)).toEqual({ token: 'own' });
    // Another kind's backends never get this kind's header.
    for (const other of BACKEND_MODULES.filter((o) => o !== m && o.credential.header !== m.credential.header)) expect(creds.get(`${other.kind}-a`)).toEqual({ token: undefined });
  });

  it('should mark its header as a credential (caller fingerprint, connection_init) and redact it in logs', () => {
    expect(isCredentialHeader(m.credential.header)).toBe(true);
    expect(isCredentialHeader(perBackendHeader(m.credential, 'east'))).toBe(true);
    expect(isCredentialHeader(`${m.credential.header}-`)).toBe(false);
    expect(REDACTED_PATHS).toContain(`headers["${m.credential.header.toLowerCase()}"]`);
  });

  it('should show its header in GraphiQL\'s header editor and /live\'s credential help', () => {
    expect(DEFAULT_HEADERS).toContain(`// ${JSON.stringify(m.credential.header)}:`);
    expect(DEFAULT_HEADERS).toContain(`// ${JSON.stringify(perBackendHeader(m.credential, '<backend-id>'))}:`);
    const page = renderLivePage({ title: 't', assetsPath: '/a', manifest: { files: { style: 's.css', script: 'm.js' } } as never, config: { endpointPath: '/graphql', defaultHeaders: null, demo: false } });
    expect(page).toContain(`<code>${m.credential.header}[-&lt;backend&gt;]</code>`);
  });

  it('should be parsed through the registry, its URL required when it needs one', () => {
    const entry = m.needsUrl ? `lab=${kind}@http://127.0.0.1:1` : `lab=${kind}`;
    expect(loadConfig({ GATEWAY_BACKENDS: entry }).backends).toEqual([expect.objectContaining({ id: 'lab', kind })]);
    if (!m.needsUrl) return;
    expect(() => loadConfig({ GATEWAY_BACKENDS: `lab=${kind}` })).toThrow(new ConfigError('backends[0].url', `is missing: kind ${kind} needs a URL (GATEWAY_BACKENDS entry id=${kind}@URL, or "url" in the file)`));
  });
});

it('should list the registry\'s kinds when a kind is unknown', () => {
  expect(() => loadConfig({ GATEWAY_BACKENDS: 'east=consul@http://x' })).toThrow(`backends[0].kind: unknown backend kind "consul" (known: ${BACKEND_MODULES.map((m) => m.kind).join(', ')})`);
});

it('should allow every kind\'s headers in a CORS preflight, shared and per backend', async () => {
  const sim = await startNomad();
  const gw = await startGatewayFor([{ id: 'east', url: sim.url }], { http: { cors: { origins: ['https://app.example.com'], credentials: true, maxAgeSeconds: 60 } } });
  const asked = BACKEND_MODULES.flatMap((m) => [m.credential.header, perBackendHeader(m.credential, 'East')]);
  const res = await fetch(gw.gateway.url, { method: 'OPTIONS', headers: { origin: 'https://app.example.com', 'access-control-request-method': 'POST', 'access-control-request-headers': asked.join(', ') } });
  expect(res.status).toBe(204);
  expect(res.headers.get('access-control-allow-headers')!.split(', ')).toEqual(expect.arrayContaining(asked.map((h) => h.toLowerCase())));
});

it('should name every kind\'s own variables when production has no backend', () => {
  const triggers = BACKEND_MODULES.flatMap((m) => (m.nativeEnv ? [m.nativeEnv.trigger] : []));
  expect(() => loadConfig({ NODE_ENV: 'production' })).toThrow(
    `set ${['GATEWAY_BACKENDS (id=kind@url,…)', ...triggers].join(', ')} or the config file's "backends"`,
  );
});
