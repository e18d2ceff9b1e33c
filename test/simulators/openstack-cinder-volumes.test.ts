/**
 * Cinder volumes against the recordings (test/fixtures/recorded/cinder-21 with noauth, so as
 * an admin; keystone-22 for member views): create/show/list/update/delete, misc actions, and the
 * member view with project isolation. Versions and errors are in
 * openstack-cinder-versions-errors.test.ts, list parameters and the volumes_links rule in
 * openstack-cinder-lists.test.ts.
 */
import { call, expectRecorded, keys, recorded, shape, startCloud, type Cloud } from './openstack-helpers';
import { until } from '../support/until';

const C01 = 'cinder-21/01-create-get.md';
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

function sim_admin_in_demo(): string {
  return c.sim.issueToken({ user: 'admin', project: 'demo' });
}

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
