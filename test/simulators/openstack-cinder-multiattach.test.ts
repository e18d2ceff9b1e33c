/**
 * Cinder volumes attached more than once: multiattach replayed from cinder-21/12 (one volume, three
 * instances, the status recomputed as they go), and attachments owned by Nova, which Cinder guards
 * since bug #2004555 (nova-26/01): refused to a user, allowed to a service, an ambiguous detach refused.
 */
import { call, CONNECTOR, expectRecorded, recorded, startCloud, type Cloud } from './openstack-helpers';
import { until } from '../support/until';

const C12 = 'cinder-21/12-multiattach.md';

let c: Cloud;
beforeAll(async () => {
  c = await startCloud();
});
afterAll(async () => {
  await c.sim.close();
});

describe('multiattach (cinder-21/12)', () => {
  it('should attach one volume to three instances and recompute the status as they go', async () => {
    const types = await call(`${c.cinder.admin}/types`, 'POST', {
      token: c.t.admin,
      body: { volume_type: { name: 'multiattach-a4e5a4', extra_specs: { multiattach: '<is> True' } } },
    });
    expectRecorded(types, recorded(C12, 'POST /types (multiattach type, admin)'));
    const vol = await call(`${c.cinder.admin}/volumes`, 'POST', {
      token: c.t.admin,
      body: { volume: { size: 1, name: 'vol-ma', volume_type: 'multiattach-a4e5a4' } },
    });
    expectRecorded(vol, recorded(C12, 'POST /volumes with the multiattach type'));
    const id = vol.json.volume.id as string;
    await until(() => c.sim.volume(id)?.status === 'available', "c.sim.volume(id)?.status === 'available'");
    const att = `${c.cinder.admin}/attachments`;
    const opts = { token: c.t.admin, mv: 'volume 3.54' };
    const a1 = await call(att, 'POST', {
      ...opts,
      body: {
        attachment: { volume_uuid: id, instance_uuid: 'cb610648-2cb9-4400-a94c-69e430c2a0de', connector: CONNECTOR },
      },
    });
    expectRecorded(a1, recorded(C12, 'POST /attachments instance #1 with connector (3.54)'));
    expectRecorded(
      await call(`${att}/${a1.json.attachment.id}/action`, 'POST', { ...opts, body: { 'os-complete': null } }),
      recorded(C12, 'os-complete #1'),
    );
    const a2 = await call(att, 'POST', {
      ...opts,
      body: {
        attachment: { volume_uuid: id, instance_uuid: '522c3ff8-e05f-4f75-bd6b-7308dd8dcc95', connector: CONNECTOR },
      },
    });
    expectRecorded(a2, recorded(C12, 'POST /attachments instance #2 with connector (3.54)'));
    expectRecorded(
      await call(`${att}/${a2.json.attachment.id}/action`, 'POST', { ...opts, body: { 'os-complete': null } }),
      recorded(C12, 'os-complete #2'),
    );
    const v = `${c.cinder.admin}/volumes/${id}`;
    expectRecorded(await call(v, 'GET', opts), recorded(C12, 'GET multiattach volume with 2 attachments (mv 3.54)'));
    expectRecorded(
      await call(`${v}/action`, 'POST', {
        token: c.t.admin,
        body: { 'os-attach': { instance_uuid: '94324b5d-7823-40bf-ba68-6d3d51c9beea', mountpoint: '/dev/vdf' } },
      }),
      recorded(C12, 'legacy os-attach of a 3rd instance on a multiattach volume'),
    );
    expectRecorded(await call(v, 'GET', opts), recorded(C12, 'GET after 3rd attach'));
    expectRecorded(
      await call(`${att}/${a1.json.attachment.id}`, 'DELETE', opts),
      recorded(C12, 'DELETE attachment #1 (service role)'),
    );
    expectRecorded(
      await call(v, 'GET', opts),
      recorded(C12, 'GET after deleting 1 of several attachments (still in-use)'),
    );
    const rest = c.sim.volume(id)!.attachments.map((a) => a.id);
    expect(rest).toHaveLength(2);
    await call(`${att}/${rest[0]}`, 'DELETE', opts);
    await call(`${att}/${rest[1]}`, 'DELETE', opts);
    expectRecorded(await call(v, 'GET', opts), recorded(C12, 'GET after deleting all attachments'));
    expectRecorded(await call(v, 'DELETE', { token: c.t.admin }), recorded(C12, 'DELETE multiattach volume'));
  });
});

describe('attachments owned by Nova (bug #2004555, nova-26/01)', () => {
  let server: string;
  let id: string;
  let aid: string;
  beforeAll(() => {
    server = c.sim.seedServer({ project: 'demo', name: 'guarded' });
    id = c.sim.seedVolume({ project: 'demo', name: 'guarded-vol' });
    aid = c.sim.attachNow(server, id, { device: '/dev/sdb' });
  });

  it('should refuse a user deleting or detaching it with 409 naming the instance', async () => {
    const N01 = 'nova-26/01-volume-attachments-mv2.1.md';
    const del = await call(`${c.cinder.demo}/attachments/${aid}`, 'DELETE', { token: c.t.demo, mv: 'volume 3.27' });
    expectRecorded(del, recorded(N01, "cinder DELETE /attachments/{nova's attachment} as demo mv 3.27 -> 409"));
    expect(del.json.conflictingRequest.message).toContain(server);
    expectRecorded(
      await call(`${c.cinder.demo}/volumes/${id}/action`, 'POST', {
        token: c.t.demo,
        body: { 'os-detach': { attachment_id: aid } },
      }),
      recorded(N01, "cinder os-detach with nova's attachment_id as demo -> 409"),
    );
    expectRecorded(
      await call(`${c.cinder.demo}/volumes/${id}`, 'DELETE', { token: c.t.demo }),
      recorded(N01, 'cinder DELETE the in-use volume directly -> 400'),
    );
  });

  it('should let a service (X-Service-Token with the service role) delete it', async () => {
    c.sim.addUser({ name: 'nova', password: 'nova-secret', projects: { admin: ['service'] } });
    const svc = c.sim.issueToken({ user: 'nova', project: 'admin' });
    const r = await call(`${c.cinder.demo}/attachments/${aid}`, 'DELETE', {
      token: c.t.demo,
      mv: 'volume 3.27',
      headers: { 'x-service-token': svc },
    });
    expect(r.status).toBe(200);
    expect(r.json).toEqual({ attachments: [] });
    expect(c.sim.volume(id)!.status).toBe('available');
  });

  it('should refuse an ambiguous os-detach (several attachments, no id) with an empty instance', async () => {
    const multi = c.sim.seedVolume({ project: 'demo', multiattach: true });
    c.sim.attachNow(c.sim.seedServer({ project: 'demo', name: 'm1' }), multi);
    c.sim.attachNow(c.sim.seedServer({ project: 'demo', name: 'm2' }), multi);
    const r = await call(`${c.cinder.demo}/volumes/${multi}/action`, 'POST', {
      token: c.t.demo,
      body: { 'os-detach': null },
    });
    expect(r.json).toEqual({
      conflictingRequest: {
        code: 409,
        message: 'ConflictNovaUsingAttachment: Detach volume from instance  using the Compute API',
      },
    });
    expect((await call(`${c.cinder.demo}/volumes/${multi}`, 'GET', { token: c.t.demo })).json.volume.multiattach).toBe(
      true,
    );
  });
});
