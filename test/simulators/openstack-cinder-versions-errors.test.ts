/**
 * Cinder's version discovery, microversions and errors against the recordings
 * (test/fixtures/recorded/cinder-21/00 and 08 with noauth, so as an admin; keystone-22/01 for the
 * 401 and the member's 403).
 */
import { call, expectRecorded, keys, recorded, shape, startCloud, type Cloud } from './openstack-helpers';

const C00 = 'cinder-21/00-versions-auth-project.md';
const C08 = 'cinder-21/08-errors.md';
const K01 = 'keystone-22/01-volumes-with-keystone-token.md';

let c: Cloud;
beforeAll(async () => {
  c = await startCloud();
});
afterAll(async () => {
  await c.sim.close();
});

describe('version discovery and microversions (cinder-21/00, 08)', () => {
  it('should answer GET / with 300 and the version document', async () => {
    expectRecorded(await call(`${c.urls.cinderUrl}/`, 'GET'), recorded(C00, 'GET / (version discovery, no token)'));
  });

  it('should answer GET /v3/ with 200 and the same document when authenticated, 401 without a token', async () => {
    const ok = await call(`${c.urls.cinderUrl}/v3/`, 'GET', { token: c.t.demo });
    expect(ok.status).toBe(200);
    expect(shape(ok.json)).toEqual(shape(recorded(C00, 'GET / (version discovery, no token)').json));
    expectRecorded(
      await call(`${c.urls.cinderUrl}/v3/`, 'GET'),
      recorded(K01, 'GET /v3/ (no token -> 401 under keystone; was 204 under noauth)'),
      ['content-type'],
    );
  });

  it('should default to 3.0, echo 3.70 and resolve latest to 3.70', async () => {
    expectRecorded(
      await call(`${c.cinder.admin}/volumes`, 'GET', { token: c.t.admin }),
      recorded(C00, "GET /v3/{project}/volumes with token 'user:project' (empty list)"),
    );
    expectRecorded(
      await call(`${c.cinder.admin}/volumes`, 'GET', { token: c.t.admin, mv: 'volume 3.70' }),
      recorded(C00, 'GET with microversion 3.70 (max)'),
    );
    expectRecorded(
      await call(`${c.cinder.admin}/volumes`, 'GET', { token: c.t.admin, mv: 'volume latest' }),
      recorded(C00, 'GET with microversion latest'),
    );
  });

  it('should answer 406 computeFault out of range and 400 without version headers when malformed', async () => {
    expectRecorded(
      await call(`${c.cinder.admin}/volumes`, 'GET', { token: c.t.admin, mv: 'volume 3.99' }),
      recorded(C08, 'ERROR microversion too high (3.99)'),
    );
    expectRecorded(
      await call(`${c.cinder.admin}/volumes`, 'GET', { token: c.t.admin, mv: 'volume 4.0' }),
      recorded(C08, 'ERROR microversion 4.0'),
    );
    const bad = await call(`${c.cinder.admin}/volumes`, 'GET', { token: c.t.admin, mv: 'volume three' });
    expectRecorded(bad, recorded(C08, 'ERROR microversion malformed'), ['content-type']);
    expect(bad.headers['openstack-api-version']).toBeUndefined();
  });

  it('should read only the volume entry of the header', async () => {
    const r = await call(`${c.cinder.admin}/volumes`, 'GET', { token: c.t.admin, mv: 'compute 2.5, volume 3.27' });
    expect(r.headers['openstack-api-version']).toBe('volume 3.27');
    expect(
      (await call(`${c.cinder.admin}/volumes`, 'GET', { token: c.t.admin, mv: 'compute 2.5' })).headers[
        'openstack-api-version'
      ],
    ).toBe('volume 3.0');
  });

  it('should serve URLs without a project (3.67 style) and reject a foreign project with 400', async () => {
    expectRecorded(
      await call(`${c.urls.cinderUrl}/v3/volumes`, 'GET', { token: c.t.admin, mv: 'volume 3.67' }),
      recorded(C00, 'URL without project id (allowed from mv 3.67)'),
    );
    expectRecorded(
      await call(`${c.cinder.demo}/volumes`, 'GET', { token: c.t.other }),
      recorded(C00, 'project in token != project in URL -> 400'),
    );
  });

  it("should answer webob's HTML 404 for unknown paths, methods and non-hex projects", async () => {
    expectRecorded(
      await call(`${c.cinder.admin}/nonexistent`, 'GET', { token: c.t.admin }),
      recorded(C08, 'ERROR unknown path'),
      ['content-type'],
    );
    expectRecorded(
      await call(`${c.urls.cinderUrl}/v3/admin/volumes`, 'GET', { token: c.t.admin }),
      recorded(C00, "non-hex project id in URL ('admin') does not match project_id_regex"),
      ['content-type'],
    );
    expectRecorded(
      await call(`${c.cinder.admin}/volumes/x`, 'PATCH', { token: c.t.admin, body: { volume: { name: 'x' } } }),
      recorded(C08, 'ERROR method not allowed (PATCH volume)'),
      ['content-type'],
    );
  });

  it('should list the default volume type and the limits', async () => {
    expectRecorded(await call(`${c.cinder.admin}/types`, 'GET', { token: c.t.admin }), recorded(C00, 'GET /types'));
    const lim = await call(`${c.cinder.other}/limits`, 'GET', { token: c.t.other });
    expectRecorded(lim, recorded(C00, 'GET /limits'));
  });

  it('should restrict os-services to admins with the recorded 403', async () => {
    expectRecorded(
      await call(`${c.cinder.demo}/os-services`, 'GET', { token: c.t.demo }),
      recorded(K01, 'GET /v3/{demo}/os-services as demo (admin-only policy -> 403)'),
    );
    const admin = await call(`${c.cinder.admin}/os-services`, 'GET', { token: c.t.admin });
    const rec = recorded(C00, 'GET /os-services').json.services;
    expect(admin.json.services.slice(0, 2).map((s: object) => keys(s))).toEqual(rec.map((s: object) => keys(s)));
    expect(admin.json.services.map((s: { binary: string; host: string }) => `${s.binary} ${s.host}`)).toEqual([
      'cinder-scheduler real-cinder',
      'cinder-volume real-cinder@fake',
      'cinder-volume real-cinder@fake2',
    ]);
  });
});

describe('errors (cinder-21/08)', () => {
  it('should reject bad bodies, actions, sizes and types with the recorded texts', async () => {
    const id = c.sim.seedVolume({ project: 'admin', size: 3 });
    const act = `${c.cinder.admin}/volumes/${id}/action`;
    expectRecorded(
      await call(act, 'POST', { token: c.t.admin, body: '{"os-extend": {"new_size": 3}' }),
      recorded(C08, 'ERROR bad JSON body (action)'),
    );
    expectRecorded(
      await call(`${c.cinder.admin}/volumes`, 'POST', { token: c.t.admin, body: '{not json' }),
      recorded(C08, 'ERROR bad JSON body (create)'),
    );
    expectRecorded(
      await call(act, 'POST', { token: c.t.admin, body: { 'os-frobnicate': {} } }),
      recorded(C08, 'ERROR unknown action'),
    );
    expectRecorded(
      await call(act, 'POST', { token: c.t.admin, body: { 'os-reserve': null, 'os-unreserve': null } }),
      recorded(C08, 'ERROR two actions in one body'),
    );
    expectRecorded(await call(act, 'POST', { token: c.t.admin, body: {} }), recorded(C08, 'ERROR empty action body'));
    expectRecorded(
      await call(`${c.cinder.admin}/volumes`, 'POST', { token: c.t.admin, body: { volume: { size: 0 } } }),
      recorded(C08, 'ERROR create size 0'),
    );
    expectRecorded(
      await call(`${c.cinder.admin}/volumes`, 'POST', { token: c.t.admin, body: { volume: { name: 'x' } } }),
      recorded(C08, 'ERROR create missing size'),
    );
    expectRecorded(
      await call(`${c.cinder.admin}/volumes`, 'POST', {
        token: c.t.admin,
        body: { volume: { size: 1, volume_type: 'nope' } },
      }),
      recorded(C08, 'ERROR create with unknown volume_type'),
    );
    expectRecorded(
      await call(`${c.cinder.admin}/volumes`, 'POST', {
        token: c.t.admin,
        body: '{"volume": {"size": 1}}',
        headers: { 'content-type': 'text/plain' },
      }),
      recorded(C08, 'ERROR wrong Content-Type (text/plain)'),
    );
    expectRecorded(
      await call(act, 'POST', { token: c.t.admin, body: { 'os-extend': { new_size: 1 } } }),
      recorded(C08, 'ERROR extend to a smaller size'),
    );
    expectRecorded(
      await call(act, 'POST', { token: c.t.admin, body: { 'os-extend': { new_size: 3 } } }),
      recorded(C08, 'ERROR extend to the same size'),
    );
    expectRecorded(
      await call(act, 'POST', { token: c.t.admin, body: { 'os-begin_detaching': null } }),
      recorded(C08, 'ERROR os-begin_detaching an available volume'),
    );
    expectRecorded(
      await call(act, 'POST', { token: c.t.admin, body: { 'os-roll_detaching': null } }),
      recorded(C08, 'ERROR os-roll_detaching an available volume (no-op?)'),
    );
    expectRecorded(
      await call(act, 'POST', { token: c.t.admin, body: { 'os-unreserve': null } }),
      recorded(C08, 'ERROR os-unreserve an available volume (no-op?)'),
    );
    expectRecorded(
      await call(act, 'POST', {
        token: c.t.admin,
        body: { 'os-detach': { attachment_id: '75513806-82a5-49cf-a164-e04263f8100a' } },
      }),
      recorded(C08, 'ERROR os-detach a volume that is not attached'),
    );
  });

  it('should answer 404 for missing volumes, snapshots and attachments', async () => {
    const zero = '00000000-0000-0000-0000-000000000000';
    expectRecorded(
      await call(`${c.cinder.admin}/volumes/${zero}`, 'GET', { token: c.t.admin }),
      recorded(C08, 'ERROR GET missing volume'),
    );
    expectRecorded(
      await call(`${c.cinder.admin}/volumes/not-a-uuid`, 'GET', { token: c.t.admin }),
      recorded(C08, 'ERROR GET non-uuid volume id'),
    );
    expectRecorded(
      await call(`${c.cinder.admin}/volumes/${zero}/action`, 'POST', {
        token: c.t.admin,
        body: { 'os-extend': { new_size: 3 } },
      }),
      recorded(C08, 'ERROR action on missing volume'),
    );
    expectRecorded(
      await call(`${c.cinder.admin}/snapshots/${zero}`, 'GET', { token: c.t.admin }),
      recorded(C08, 'ERROR GET missing snapshot'),
    );
    expectRecorded(
      await call(`${c.cinder.admin}/attachments/${zero}`, 'GET', { token: c.t.admin, mv: 'volume 3.27' }),
      recorded(C08, 'ERROR GET missing attachment'),
    );
  });

  it('should refuse to delete, extend (< 3.42) or snapshot (no force) an in-use volume', async () => {
    const server = c.sim.seedServer({ project: 'admin', name: 's' });
    const id = c.sim.seedVolume({ project: 'admin', size: 1 });
    c.sim.attachNow(server, id);
    expectRecorded(
      await call(`${c.cinder.admin}/volumes/${id}`, 'DELETE', { token: c.t.admin }),
      recorded(C08, 'ERROR DELETE in-use volume'),
    );
    expectRecorded(
      await call(`${c.cinder.admin}/volumes/${id}/action`, 'POST', {
        token: c.t.admin,
        body: { 'os-extend': { new_size: 2 } },
      }),
      recorded(C08, 'ERROR os-extend an in-use volume at mv 3.0'),
    );
    expectRecorded(
      await call(`${c.cinder.admin}/snapshots`, 'POST', {
        token: c.t.admin,
        body: { snapshot: { volume_id: id, name: 's-x' } },
      }),
      recorded(C08, 'ERROR POST /snapshots of in-use volume without force'),
    );
    expectRecorded(
      await call(`${c.cinder.admin}/volumes/${id}/action`, 'POST', {
        token: c.t.admin,
        body: { 'os-attach': { instance_uuid: 'ad0ef545-12f2-4870-ac11-c10b544000b0', mountpoint: '/dev/vdd' } },
      }),
      recorded(C08, 'ERROR os-attach a 2nd instance to in-use non-multiattach volume'),
    );
    expectRecorded(
      await call(`${c.cinder.admin}/attachments`, 'POST', {
        token: c.t.admin,
        mv: 'volume 3.27',
        body: { attachment: { volume_uuid: id, instance_uuid: 'ad0ef545-12f2-4870-ac11-c10b544000b0' } },
      }),
      recorded(C08, 'ERROR POST /attachments for 2nd instance on in-use non-multiattach volume'),
    );
  });
});
