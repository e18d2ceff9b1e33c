/**
 * Cinder volumes against the recordings (test/fixtures/recorded/cinder-21 with noauth, so as
 * an admin; keystone-22 for member views): versions, microversions, create/show/list/update/
 * delete, errors, misc actions, list parameters and the volumes_links rule.
 */
import { call, expectRecorded, keys, recorded, shape, startCloud, type Cloud } from './openstack-helpers';
import { until } from '../support/until';

const C00 = 'cinder-21/00-versions-auth-project.md';
const C01 = 'cinder-21/01-create-get.md';
const C08 = 'cinder-21/08-errors.md';
const C09 = 'cinder-21/09-misc-actions.md';
const K01 = 'keystone-22/01-volumes-with-keystone-token.md';

let c: Cloud;
beforeAll(async () => {
  c = await startCloud();
});
afterAll(async () => {
  await c.sim.close();
});

async function createVolA(): Promise<string> {
  const r = await call(`${c.cinder.admin}/volumes`, 'POST', {
    token: c.t.admin,
    body: { volume: { size: 1, name: 'vol-a', description: 'first', metadata: { purpose: 'transcript' } } },
  });
  expectRecorded(r, recorded(C01, 'POST /volumes (size 1)'));
  const id = r.json.volume.id as string;
  await until(() => c.sim.volume(id)?.status === 'available', "c.sim.volume(id)?.status === 'available'");
  return id;
}

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

describe('volume CRUD as recorded (cinder-21/01, 09, 10)', () => {
  let id: string;
  beforeAll(async () => {
    id = await createVolA();
  });

  it('should show, list and list-detail with the admin view', async () => {
    expectRecorded(
      await call(`${c.cinder.admin}/volumes/${id}`, 'GET', { token: c.t.admin }),
      recorded(C01, 'GET /volumes/{id}'),
    );
    expectRecorded(
      await call(`${c.cinder.admin}/volumes/${id}`, 'GET', { token: c.t.admin, mv: 'volume 3.70' }),
      recorded(C01, 'GET /volumes/{id} at mv 3.70'),
    );
    expectRecorded(
      await call(`${c.cinder.admin}/volumes`, 'GET', { token: c.t.admin }),
      recorded(C01, 'GET /volumes (summary list)'),
    );
    expectRecorded(
      await call(`${c.cinder.admin}/volumes/detail`, 'GET', { token: c.t.admin }),
      recorded(C01, 'GET /volumes/detail'),
    );
  });

  it('should rename with PUT (no extension keys, updated_at as loaded) and filter by status', async () => {
    const before = c.sim.volume(id)!.updatedAt;
    const put = await call(`${c.cinder.admin}/volumes/${id}`, 'PUT', {
      token: c.t.admin,
      body: { volume: { name: 'vol-a-renamed', description: 'renamed' } },
    });
    expectRecorded(put, recorded(C01, 'PUT /volumes/{id} (rename)'));
    expect(c.sim.volume(id)!.updatedAt).toBeGreaterThan(before!);
    expectRecorded(
      await call(`${c.cinder.admin}/volumes/detail?status=available&limit=5`, 'GET', { token: c.t.admin }),
      recorded(C01, 'GET /volumes/detail?status=available&limit=5'),
    );
  });

  it('should let an admin see another project volume by id and with all_tenants', async () => {
    const other = await call(`${c.cinder.demo}/volumes/${id}`, 'GET', { token: sim_admin_in_demo() });
    expect(other.status).toBe(200);
    expect(other.json.volume.links[0].href).toContain(`/v3/${c.p.demo}/volumes/`);
    expect((await call(`${c.cinder.demo}/volumes/detail`, 'GET', { token: sim_admin_in_demo() })).json.volumes).toEqual(
      [],
    );
    expect(
      (await call(`${c.cinder.demo}/volumes/detail?all_tenants=1`, 'GET', { token: sim_admin_in_demo() })).json.volumes,
    ).toHaveLength(1);
  });

  it('should set bootable (a string in the view), readonly and image metadata as recorded', async () => {
    expectRecorded(
      await call(`${c.cinder.admin}/volumes/${id}/action`, 'POST', {
        token: c.t.admin,
        body: { 'os-set_bootable': { bootable: true } },
      }),
      recorded(C09, 'os-set_bootable true'),
    );
    expect((await call(`${c.cinder.admin}/volumes/${id}`, 'GET', { token: c.t.admin })).json.volume.bootable).toBe(
      'true',
    );
    expectRecorded(
      await call(`${c.cinder.admin}/volumes/${id}/action`, 'POST', {
        token: c.t.admin,
        body: { 'os-set_bootable': { bootable: 'maybe' } },
      }),
      recorded(C09, 'os-set_bootable bad value'),
    );
    expectRecorded(
      await call(`${c.cinder.admin}/volumes/${id}/action`, 'POST', {
        token: c.t.admin,
        body: { 'os-update_readonly_flag': { readonly: true } },
      }),
      recorded(C09, 'os-update_readonly_flag true'),
    );
    expect((await call(`${c.cinder.admin}/volumes/${id}`, 'GET', { token: c.t.admin })).json.volume.metadata).toEqual({
      purpose: 'transcript',
      readonly: 'True',
    });
    const att = await call(`${c.cinder.admin}/volumes/${id}/action`, 'POST', {
      token: c.t.admin,
      body: {
        'os-attach': { instance_uuid: 'b355aeeb-faff-4443-a123-d2d6b3dc88fa', mountpoint: '/dev/vde', mode: 'rw' },
      },
    });
    expectRecorded(att, recorded(C09, 'os-attach rw on a readonly volume'));
    expectRecorded(
      await call(`${c.cinder.admin}/volumes/${id}/action`, 'POST', {
        token: c.t.admin,
        body: { 'os-update_readonly_flag': { readonly: false } },
      }),
      recorded(C09, 'os-update_readonly_flag false'),
    );
    expectRecorded(
      await call(`${c.cinder.admin}/volumes/${id}/action`, 'POST', {
        token: c.t.admin,
        body: { 'os-set_image_metadata': { metadata: { image_name: 'cirros', hw_disk_bus: 'virtio' } } },
      }),
      recorded(C09, 'os-set_image_metadata'),
    );
    expectRecorded(
      await call(`${c.cinder.admin}/volumes/${id}/action`, 'POST', {
        token: c.t.admin,
        body: { 'os-show_image_metadata': null },
      }),
      recorded(C09, 'os-show_image_metadata'),
    );
    expectRecorded(
      await call(`${c.cinder.admin}/volumes/${id}/action`, 'POST', {
        token: c.t.admin,
        body: { 'os-unset_image_metadata': { key: 'hw_disk_bus' } },
      }),
      recorded(C09, 'os-unset_image_metadata'),
    );
    expectRecorded(
      await call(`${c.cinder.admin}/volumes/${id}/action`, 'POST', {
        token: c.t.admin,
        body: { 'os-unset_image_metadata': { key: 'nope' } },
      }),
      recorded(C09, 'os-unset_image_metadata missing key'),
    );
  });

  it('should reset status (admin) and reject unknown statuses with the recorded list', async () => {
    expectRecorded(
      await call(`${c.cinder.admin}/volumes/${id}/action`, 'POST', {
        token: c.t.admin,
        body: { 'os-reset_status': { status: 'error' } },
      }),
      recorded(C09, 'os-reset_status -> error'),
    );
    expect(c.sim.volume(id)!.status).toBe('error');
    expectRecorded(
      await call(`${c.cinder.admin}/volumes/${id}/action`, 'POST', {
        token: c.t.admin,
        body: { 'os-reset_status': { status: 'available' } },
      }),
      recorded(C09, 'os-reset_status -> available'),
    );
    expectRecorded(
      await call(`${c.cinder.admin}/volumes/${id}/action`, 'POST', {
        token: c.t.admin,
        body: { 'os-reset_status': { status: 'bogus' } },
      }),
      recorded(C09, 'os-reset_status bad status'),
    );
  });

  it('should extend asynchronously (cinder-21/06) and manage volume metadata', async () => {
    const ext = await call(`${c.cinder.admin}/volumes/${id}/action`, 'POST', {
      token: c.t.admin,
      body: { 'os-extend': { new_size: 3 } },
    });
    expectRecorded(ext, recorded('cinder-21/06-extend.md', 'os-extend to 3'));
    expect(c.sim.volume(id)!.status).toBe('extending');
    await until(() => c.sim.volume(id)?.status === 'available', "c.sim.volume(id)?.status === 'available'");
    expect(c.sim.volume(id)!.size).toBe(3);
    expectRecorded(
      await call(`${c.cinder.admin}/volumes/${id}/metadata`, 'POST', {
        token: c.t.admin,
        body: { metadata: { k1: 'v1' } },
      }),
      recorded(C09, 'POST /volumes/{id}/metadata'),
    );
    expectRecorded(
      await call(`${c.cinder.admin}/volumes/${id}/metadata`, 'GET', { token: c.t.admin }),
      recorded(C09, 'GET /volumes/{id}/metadata'),
    );
    expectRecorded(
      await call(`${c.cinder.admin}/volumes/${id}`, 'GET', { token: c.t.admin }),
      recorded(C09, 'GET final state of the volume'),
    );
    expect((await call(`${c.cinder.admin}/volumes/${id}/metadata/k1`, 'GET', { token: c.t.admin })).json).toEqual({
      meta: { k1: 'v1' },
    });
    expect((await call(`${c.cinder.admin}/volumes/${id}/metadata/k1`, 'DELETE', { token: c.t.admin })).status).toBe(
      200,
    );
    expect((await call(`${c.cinder.admin}/volumes/${id}/metadata/k1`, 'GET', { token: c.t.admin })).status).toBe(404);
  });

  it('should delete asynchronously and then answer 404 as recorded', async () => {
    const del = await call(`${c.cinder.admin}/volumes/${id}`, 'DELETE', { token: c.t.admin });
    expectRecorded(del, recorded('cinder-21/10-delete.md', 'DELETE /volumes/{id}'));
    expect(c.sim.volume(id)!.status).toBe('deleting');
    await until(() => c.sim.volume(id) === undefined, 'c.sim.volume(id) === undefined');
    expectRecorded(
      await call(`${c.cinder.admin}/volumes/${id}`, 'GET', { token: c.t.admin }),
      recorded('cinder-21/10-delete.md', 'GET deleted volume'),
    );
  });
});

function sim_admin_in_demo(): string {
  return c.sim.issueToken({ user: 'admin', project: 'demo' });
}

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

describe('member view and project isolation (keystone-22/01, 02)', () => {
  let id: string;
  beforeAll(async () => {
    const r = await call(`${c.cinder.demo}/volumes`, 'POST', {
      token: c.t.demo,
      body: { volume: { size: 1, name: 'ks-demo-vol' } },
    });
    expectRecorded(r, recorded(K01, 'POST /v3/{demo}/volumes with demo token'));
    id = r.json.volume.id;
    await until(() => c.sim.volume(id)?.status === 'available', "c.sim.volume(id)?.status === 'available'");
  });

  it('should hide admin-only keys from members', async () => {
    expectRecorded(
      await call(`${c.cinder.demo}/volumes/${id}`, 'GET', { token: c.t.demo }),
      recorded(K01, 'GET /v3/{demo}/volumes/{id} (demo, non-admin: no os-vol-host-attr/tenant_attr)'),
    );
    const detail = await call(`${c.cinder.demo}/volumes/detail`, 'GET', { token: c.t.demo, mv: 'volume 3.70' });
    expect(shape(detail.json.volumes[0])).toEqual(
      shape(recorded(K01, 'GET /v3/{demo}/volumes/detail mv 3.70 (demo)').json.volumes[0]),
    );
    expect(keys(detail.json.volumes[0])).toEqual(
      keys(recorded(K01, 'GET /v3/{demo}/volumes/detail mv 3.70 (demo)').json.volumes[0]),
    );
  });

  it('should link without a project for 3.67-style URLs', async () => {
    const r = await call(`${c.urls.cinderUrl}/v3/volumes`, 'GET', { token: c.t.demo });
    expect(shape(r.json)).toEqual(
      shape({ volumes: [recorded(K01, 'GET /v3/volumes (no project in URL, demo)').json.volumes[0]] }),
    );
  });

  it("should 404 another project's volume and ignore all_tenants for members", async () => {
    const K02 = 'keystone-22/02-project-isolation.md';
    expectRecorded(
      await call(`${c.cinder.other}/volumes/${id}`, 'GET', { token: c.t.other }),
      recorded(K02, "GET /v3/{other}/volumes/{demo's id} with other's token -> 404"),
    );
    expectRecorded(
      await call(`${c.cinder.other}/volumes`, 'GET', { token: c.t.other }),
      recorded(K02, "GET /v3/{other}/volumes with other's token (demo's volume absent)"),
    );
    expectRecorded(
      await call(`${c.cinder.other}/volumes/detail?all_tenants=1`, 'GET', { token: c.t.other }),
      recorded(K02, 'GET /v3/{other}/volumes/detail?all_tenants=1 as other (non-admin: ignored)'),
    );
    expectRecorded(
      await call(`${c.cinder.demo}/volumes/${id}`, 'GET', { token: c.t.other }),
      recorded(K02, "GET /v3/{demo}/volumes/{id} with other's token (URL project != token project)"),
    );
    expectRecorded(
      await call(`${c.cinder.other}/volumes/${id}`, 'DELETE', { token: c.t.other }),
      recorded(K02, "DELETE /v3/{other}/volumes/{demo's id} with other's token -> 404"),
    );
  });

  it('should forbid admin actions to members with the policy text', async () => {
    expectRecorded(
      await call(`${c.cinder.demo}/volumes/${id}/action`, 'POST', {
        token: c.t.demo,
        body: { 'os-reset_status': { status: 'error' } },
      }),
      recorded(K01, 'POST os-reset_status as demo (admin-only -> 403)'),
    );
    for (const action of ['os-force_delete', 'os-unmanage', 'os-force_detach']) {
      const r = await call(`${c.cinder.demo}/volumes/${id}/action`, 'POST', {
        token: c.t.demo,
        body: { [action]: {} },
      });
      expect(r.status).toBe(403);
      expect(r.json.forbidden.message).toMatch(/^Policy doesn't allow volume_extension:.+ to be performed\.$/);
    }
  });

  it('should let readers read but (with the default Zed policies) also write', async () => {
    expect((await call(`${c.cinder.demo}/volumes/${id}`, 'GET', { token: c.t.reader })).status).toBe(200);
    expect(
      (
        await call(`${c.cinder.demo}/volumes/${id}`, 'PUT', {
          token: c.t.reader,
          body: { volume: { description: 'd' } },
        })
      ).status,
    ).toBe(200);
  });
});

describe('list parameters', () => {
  let ids: string[];
  beforeAll(() => {
    ids = ['l-1', 'l-2', 'l-3', 'l-4', 'l-5'].map((name, i) =>
      c.sim.seedVolume({
        project: 'other',
        name,
        size: i + 1,
        bootable: i === 0,
        metadata: i < 2 ? { tier: 'gold' } : {},
      }),
    );
  });

  it('should sort created_at desc by default and honour sort / sort_key', async () => {
    const names = async (q: string): Promise<string[]> =>
      (await call(`${c.cinder.other}/volumes?${q}`, 'GET', { token: c.t.other })).json.volumes.map(
        (v: { name: string }) => v.name,
      );
    expect(await names('')).toEqual(['l-5', 'l-4', 'l-3', 'l-2', 'l-1']);
    expect(await names('sort=name:asc')).toEqual(['l-1', 'l-2', 'l-3', 'l-4', 'l-5']);
    expect(await names('sort_key=size&sort_dir=asc')).toEqual(['l-1', 'l-2', 'l-3', 'l-4', 'l-5']);
    const mixed = await call(`${c.cinder.other}/volumes?sort=name&sort_key=size`, 'GET', { token: c.t.other });
    expect(mixed.json).toEqual({
      badRequest: {
        code: 400,
        message:
          "The 'sort_key' and 'sort_dir' parameters are deprecated and cannot be used with the 'sort' parameter.",
      },
    });
  });

  it('should emit volumes_links whenever a page is full, marker = last id, even on the last page', async () => {
    const first = await call(`${c.cinder.other}/volumes?limit=2&sort=name:asc`, 'GET', { token: c.t.other });
    expect(first.json.volumes.map((v: { id: string }) => v.id)).toEqual([ids[0], ids[1]]);
    expect(first.json.volumes_links).toEqual([
      { rel: 'next', href: `${c.urls.cinderUrl}/v3/${c.p.other}/volumes?limit=2&sort=name%3Aasc&marker=${ids[1]}` },
    ]);
    const page3 = await call(
      `${c.cinder.other}/volumes/detail?limit=1&offset=0&marker=${ids[3]}&sort=name:asc`,
      'GET',
      { token: c.t.other },
    );
    expect(page3.json.volumes).toHaveLength(1);
    expect(page3.json.volumes_links[0].href).toBe(
      `${c.urls.cinderUrl}/v3/${c.p.other}/volumes/detail?limit=1&offset=0&sort=name%3Aasc&marker=${ids[4]}`,
    );
    const after = await call(`${c.cinder.other}/volumes?limit=1&marker=${ids[4]}&sort=name:asc`, 'GET', {
      token: c.t.other,
    });
    expect(after.json).toEqual({ volumes: [] });
    const short = await call(`${c.cinder.other}/volumes?limit=10`, 'GET', { token: c.t.other });
    expect(short.json.volumes_links).toBeUndefined();
  });

  it('should count with with_count (>= 3.45) and then link every non-empty page', async () => {
    const r = await call(`${c.cinder.other}/volumes?limit=3&offset=3&with_count=true`, 'GET', {
      token: c.t.other,
      mv: 'volume 3.45',
    });
    expect(r.json.count).toBe(5);
    expect(r.json.volumes).toHaveLength(2);
    expect(keys(r.json)).toEqual(['volumes', 'volumes_links', 'count']);
    const old = await call(`${c.cinder.other}/volumes?with_count=true`, 'GET', { token: c.t.other, mv: 'volume 3.44' });
    expect(old.json).toEqual({
      badRequest: { code: 400, message: 'Invalid filters with_count are found in query options.' },
    });
  });

  it('should filter by name, bootable, size and metadata, and reject unknown filters from 3.31', async () => {
    const n = async (q: string, mv = 'volume 3.31'): Promise<number> =>
      (await call(`${c.cinder.other}/volumes?${q}`, 'GET', { token: c.t.other, mv })).json.volumes.length;
    expect(await n('name=l-3')).toBe(1);
    expect(await n('bootable=true')).toBe(1);
    expect(await n('size=2')).toBe(1);
    expect(await n(`metadata=${encodeURIComponent("{'tier': 'gold'}")}`)).toBe(2);
    const bad = await call(`${c.cinder.other}/volumes?foo=1`, 'GET', { token: c.t.other, mv: 'volume 3.31' });
    expect(bad.json).toEqual({ badRequest: { code: 400, message: 'Invalid filters foo are found in query options.' } });
    expect(await n('foo=1', 'volume 3.30')).toBe(5);
  });

  it('should validate limit, offset and marker', async () => {
    const get = (q: string): Promise<{ json: unknown; status: number }> =>
      call(`${c.cinder.other}/volumes?${q}`, 'GET', { token: c.t.other });
    expect((await get('limit=x')).json).toEqual({
      badRequest: { code: 400, message: 'limit param must be an integer' },
    });
    expect((await get('limit=-1')).json).toEqual({
      badRequest: { code: 400, message: 'limit param must be positive' },
    });
    expect((await get('marker=00000000-0000-0000-0000-000000000000')).json).toEqual({
      itemNotFound: { code: 404, message: 'Volume 00000000-0000-0000-0000-000000000000 could not be found.' },
    });
  });

  it('should summarise (>= 3.12, metadata >= 3.36) and 404 below 3.12', async () => {
    expect((await call(`${c.cinder.other}/volumes/summary`, 'GET', { token: c.t.other })).json).toEqual({
      itemNotFound: { code: 404, message: 'The resource could not be found.' },
    });
    const s = await call(`${c.cinder.other}/volumes/summary`, 'GET', { token: c.t.other, mv: 'volume 3.36' });
    expect(s.json).toEqual({ 'volume-summary': { total_size: 15, total_count: 5, metadata: { tier: ['gold'] } } });
  });
});
