/**
 * Keystone (keystone-22/00, 03) and keystonemiddleware in front of Cinder and Nova: password and
 * application-credential auth, the catalog, validation and revocation, bad, expired and revoked
 * tokens, and a request log without secrets.
 */
import { call, expectRecorded, keys, recorded, shape, sleep, startCloud, type Cloud } from './openstack-helpers';
import { OS } from '../support/constants';

const K00 = 'keystone-22/00-keystone-auth.md';
const K03 = 'keystone-22/03-bad-tokens.md';

let c: Cloud;
beforeAll(async () => {
  c = await startCloud();
  c.sim.addApplicationCredential({
    user: 'demo',
    project: 'demo',
    name: 'realcinder-demo',
    secret: 'demo-appcred-secret',
    id: '9aacd8ecaaa644ad846df3ffba9c17d2',
  });
});
afterAll(async () => {
  await c.sim.close();
});

const tokens = (): string => `${c.urls.keystoneUrl}/auth/tokens`;
const passwordAuth = (user: string, password: string, project?: string): object => ({
  auth: {
    identity: { methods: ['password'], password: { user: { name: user, domain: { name: 'Default' }, password } } },
    ...(project ? { scope: { project: { name: project, domain: { name: 'Default' } } } } : {}),
  },
});

/** The recorded catalog had no compute entry; ours appends it. */
function withoutCompute(body: { token: { catalog?: Array<{ type: string }> } }): unknown {
  const copy = structuredClone(body);
  if (copy.token.catalog) copy.token.catalog = copy.token.catalog.filter((s) => s.type !== 'compute');
  return copy;
}

describe('Keystone', () => {
  it('should serve the identity version document', async () => {
    expectRecorded(await call(c.urls.keystoneUrl, 'GET'), recorded(K00, 'GET /v3 (identity version document)'), [
      'content-type',
      'vary',
    ]);
  });

  it('should issue a project-scoped password token with the recorded body, headers and catalog', async () => {
    const r = await call(tokens(), 'POST', { body: passwordAuth(OS.demoUser, OS.demoPassword, 'demo') });
    const rec = recorded(K00, 'POST /v3/auth/tokens password, user demo scoped to project demo (token + catalog)');
    expect([r.status, r.statusText]).toEqual([201, 'CREATED']);
    expect(r.headers['x-subject-token']).toMatch(/^gAAAAAB[A-Za-z0-9_-]{150,}$/);
    expect(r.headers.vary).toBe('X-Auth-Token');
    expect(JSON.stringify(shape(withoutCompute(r.json)))).toBe(JSON.stringify(shape(rec.json)));
    const compute = r.json.token.catalog.find((s: { type: string }) => s.type === 'compute');
    expect(
      compute.endpoints.map((e: { interface: string; url: string; region: string }) => [e.interface, e.url, e.region]),
    ).toEqual(['public', 'internal', 'admin'].map((i) => [i, `${c.urls.novaUrl}/v2.1`, 'RegionOne']));
    const volumev3 = r.json.token.catalog.find((s: { type: string }) => s.type === 'volumev3');
    expect(volumev3.endpoints[0].url).toBe(`${c.urls.cinderUrl}/v3/${c.p.demo}`);
    const exp = Date.parse(r.json.token.expires_at) - Date.parse(r.json.token.issued_at);
    expect(exp).toBe(3_600_000);
    const bare = await call(`${tokens()}?nocatalog`, 'POST', {
      body: passwordAuth(OS.demoUser, OS.demoPassword, 'demo'),
    });
    expect(bare.json.token.catalog).toBeUndefined();
  });

  it('should scope a scope-less password auth to the default project, else issue an unscoped token', async () => {
    const scoped = await call(tokens(), 'POST', { body: passwordAuth(OS.demoUser, OS.demoPassword) });
    expect(JSON.stringify(shape(withoutCompute(scoped.json)))).toBe(
      JSON.stringify(shape(recorded(K00, 'POST /v3/auth/tokens password, unscoped (no catalog, no roles)').json)),
    );
    const unscoped = await call(tokens(), 'POST', { body: passwordAuth(OS.otherUser, OS.otherPassword) });
    expect(unscoped.status).toBe(201);
    expect(keys(unscoped.json.token)).toEqual(['methods', 'user', 'audit_ids', 'expires_at', 'issued_at']);
  });

  it('should authenticate application credentials by id and by name + user', async () => {
    const byId = await call(tokens(), 'POST', {
      body: {
        auth: {
          identity: {
            methods: ['application_credential'],
            application_credential: { id: '9aacd8ecaaa644ad846df3ffba9c17d2', secret: 'demo-appcred-secret' },
          },
        },
      },
    });
    expect(JSON.stringify(shape(withoutCompute(byId.json)))).toBe(
      JSON.stringify(shape(recorded(K00, 'POST /v3/auth/tokens application credential of demo (id + secret)').json)),
    );
    const byName = await call(tokens(), 'POST', {
      body: {
        auth: {
          identity: {
            methods: ['application_credential'],
            application_credential: {
              name: 'realcinder-demo',
              user: { name: 'demo', domain: { name: 'Default' } },
              secret: 'demo-appcred-secret',
            },
          },
        },
      },
    });
    expect(JSON.stringify(shape(withoutCompute(byName.json)))).toBe(
      JSON.stringify(shape(recorded(K00, 'POST /v3/auth/tokens application credential by name + user').json)),
    );
    const wrong = await call(tokens(), 'POST', {
      body: {
        auth: {
          identity: {
            methods: ['application_credential'],
            application_credential: { id: '9aacd8ecaaa644ad846df3ffba9c17d2', secret: 'nope' },
          },
        },
      },
    });
    expect(wrong.status).toBe(401);
  });

  it('should answer 401 with the recorded body for a wrong password or a project without a role', async () => {
    const bad = await call(tokens(), 'POST', { body: passwordAuth('demo', 'wrong', 'demo') });
    const rec = recorded(K00, 'POST /v3/auth/tokens wrong password -> 401');
    expectRecorded(bad, rec, ['content-type', 'vary']);
    expect(bad.statusText).toBe('UNAUTHORIZED');
    expect(bad.headers['www-authenticate']).toBe(`Keystone uri="${c.urls.keystoneUrl}"`);
    expectRecorded(
      await call(tokens(), 'POST', { body: passwordAuth(OS.demoUser, OS.demoPassword, 'other') }),
      recorded(K00, 'POST /v3/auth/tokens user demo scoped to project other (no role there) -> 401'),
      ['content-type', 'vary'],
    );
  });

  it('should validate a token (GET /v3/auth/tokens) and list the catalog', async () => {
    const v = await call(tokens(), 'GET', { token: c.t.demo, headers: { 'x-subject-token': c.t.demo } });
    expect(v.status).toBe(200);
    expect(v.headers['x-subject-token']).toBe(c.t.demo);
    expect(keys(v.json.token)).toEqual(
      keys(recorded(K00, 'GET /v3/auth/tokens (validate demo token, as demo)').json.token),
    );
    const cat = await call(`${c.urls.keystoneUrl}/auth/catalog`, 'GET', { token: c.t.demo });
    expect(cat.text.endsWith('\n')).toBe(true);
    expect(JSON.stringify(shape({ ...cat.json, catalog: cat.json.catalog.slice(0, 3) }))).toBe(
      JSON.stringify(shape(recorded(K00, 'GET /v3/auth/catalog (demo token)').json)),
    );
  });
});

describe('bad, expired and revoked tokens at Cinder and Nova (keystone-22/03)', () => {
  it('should answer 401 without a token, with garbage, noauth-style and tampered tokens', async () => {
    const url = `${c.cinder.demo}/volumes`;
    expectRecorded(await call(url, 'GET'), recorded(K03, 'GET volumes without X-Auth-Token -> 401'), ['content-type']);
    expectRecorded(
      await call(url, 'GET', { token: 'bogus' }),
      recorded(K03, 'GET volumes with a garbage token -> 401'),
      ['content-type'],
    );
    expectRecorded(
      await call(url, 'GET', { token: `admin:${c.p.demo}` }),
      recorded(K03, 'GET volumes with a noauth-style token admin:<project> -> 401'),
      ['content-type'],
    );
    expectRecorded(
      await call(url, 'GET', { token: `${c.t.demo.slice(0, -6)}AAAAAA` }),
      recorded(K03, 'GET volumes with a fernet token whose last chars are changed -> 401'),
      ['content-type'],
    );
    const r = await call(url, 'GET');
    expect(r.headers['www-authenticate']).toBe(`Keystone uri="${c.urls.keystoneUrl.replace(/\/v3$/, '')}"`);
    expect(r.headers['openstack-api-version']).toBeUndefined();
  });

  it('should reject expired tokens (keystone 404 on validation, 401 at the services)', async () => {
    const t = c.sim.issueToken({ user: 'demo', project: 'demo' });
    c.sim.expireToken(t);
    expectRecorded(
      await call(tokens(), 'GET', { token: c.t.demo, headers: { 'x-subject-token': t } }),
      recorded(K03, 'keystone GET /v3/auth/tokens on the expired token -> 404'),
      ['content-type', 'vary'],
    );
    expectRecorded(
      await call(`${c.cinder.demo}/volumes`, 'GET', { token: t }),
      recorded(K03, 'GET volumes with the expired token -> 401'),
      ['content-type'],
    );
    expect((await call(`${c.nova}/servers`, 'GET', { token: t })).status).toBe(401);
  });

  it('should honour the token TTL option', async () => {
    const { sim, cinder, nova } = await startCloud({ tokenTtlMs: 40 });
    try {
      const t = sim.issueToken({ user: OS.demoUser, project: 'demo' });
      expect((await call(`${cinder.demo}/volumes`, 'GET', { token: t })).status).toBe(200);
      await sleep(60);
      expect((await call(`${cinder.demo}/volumes`, 'GET', { token: t })).status).toBe(401);
      expect((await call(`${nova}/servers`, 'GET', { token: t })).status).toBe(401);
    } finally {
      await sim.close();
    }
  });

  it('should revoke tokens, except where the service cached an earlier validation', async () => {
    const fresh = c.sim.issueToken({ user: 'demo', project: 'demo' });
    const del = await call(tokens(), 'DELETE', { token: c.t.demo, headers: { 'x-subject-token': fresh } });
    expectRecorded(del, recorded(K03, 'DELETE /v3/auth/tokens (revoke a fresh demo token)'), ['vary']);
    expect(del.statusText).toBe('NO CONTENT');
    expectRecorded(
      await call(`${c.cinder.demo}/volumes`, 'GET', { token: fresh }),
      recorded(K03, 'GET volumes with the revoked token (never used on cinder before) -> 401'),
      ['content-type'],
    );
    const used = c.sim.issueToken({ user: 'demo', project: 'demo' });
    expect((await call(`${c.cinder.demo}/volumes`, 'GET', { token: used })).status).toBe(200);
    await call(tokens(), 'DELETE', { token: c.t.demo, headers: { 'x-subject-token': used } });
    expect((await call(`${c.cinder.demo}/volumes`, 'GET', { token: used })).status).toBe(200);
    expect((await call(`${c.nova}/servers`, 'GET', { token: used })).status).toBe(401);
    expect((await call(tokens(), 'GET', { token: c.t.demo, headers: { 'x-subject-token': used } })).status).toBe(404);
  });
});

describe('request log', () => {
  it('should log every service request in order with the microversion header and no secrets', async () => {
    c.sim.clearRequests();
    await call(tokens(), 'POST', { body: passwordAuth(OS.demoUser, OS.demoPassword, 'demo') });
    await call(`${c.cinder.demo}/volumes?limit=1&limit=2`, 'GET', { token: c.t.demo, mv: 'volume 3.27' });
    await call(`${c.nova}/servers`, 'GET', { token: c.t.demo, headers: { 'x-openstack-nova-api-version': '2.5' } });
    await call(`${c.urls.cinderUrl}/_sim/requests`, 'GET');
    const log = c.sim.requests();
    expect(log.map((e) => [e.service, e.method, e.path, e.status, e.microversion])).toEqual([
      ['keystone', 'POST', '/v3/auth/tokens', 201, null],
      ['cinder', 'GET', `/v3/${c.p.demo}/volumes`, 200, 'volume 3.27'],
      ['nova', 'GET', '/v2.1/servers', 200, '2.5'],
    ]);
    expect(log[1]!.query).toBe('limit=1&limit=2');
    expect(log[1]!.params).toEqual({ limit: ['1', '2'] });
    expect(Number.isNaN(Date.parse(log[0]!.time))).toBe(false);
    const text = JSON.stringify(log);
    expect(text).not.toContain(OS.demoPassword);
    expect(text).not.toContain(c.t.demo);
  });

  it('should name the action of POST …/action requests, without its arguments', async () => {
    const id = c.sim.seedVolume({ project: 'demo' });
    c.sim.clearRequests();
    await call(`${c.cinder.demo}/volumes/${id}/action`, 'POST', {
      token: c.t.demo,
      body: { 'os-set_image_metadata': { metadata: { secret_key: 'v' } } },
    });
    await call(`${c.cinder.demo}/volumes/${id}`, 'PUT', { token: c.t.demo, body: { volume: { name: 'n' } } });
    const [action, put] = c.sim.requests();
    expect(action).toMatchObject({ action: 'os-set_image_metadata', status: 200 });
    expect(put!.action).toBeUndefined();
    expect(JSON.stringify(c.sim.requests())).not.toContain('secret_key');
  });
});
