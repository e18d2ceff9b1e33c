/**
 * Attachments in Cinder, replaying cinder-21/02–05 and 08 in their recorded order (the volume
 * carries its admin metadata from step to step, as in the recording). Multiattach (cinder-21/12)
 * and the bug #2004555 guard against Nova-owned attachments are in
 * openstack-cinder-multiattach.test.ts.
 */
import { call, CONNECTOR, expectRecorded, recorded, startCloud, type Cloud } from './openstack-helpers';
import { until } from '../support/until';

const C02 = 'cinder-21/02-reserve-unreserve.md';
const C03 = 'cinder-21/03-attach-legacy.md';
const C04 = 'cinder-21/04-detach.md';
const C05 = 'cinder-21/05-attachments-api.md';
const C08 = 'cinder-21/08-errors.md';

let c: Cloud;
beforeAll(async () => {
  c = await startCloud();
});
afterAll(async () => {
  await c.sim.close();
});

describe('the recorded attach/detach sequence on one volume (cinder-21/02–05, 08)', () => {
  let id: string;
  let vol: string;
  let act: string;
  const admin = (): { token: string } => ({ token: c.t.admin });
  beforeAll(() => {
    id = c.sim.seedVolume({
      project: 'admin',
      user: 'admin',
      name: 'vol-a-renamed',
      description: 'renamed',
      size: 1,
      metadata: { purpose: 'transcript' },
    });
    vol = `${c.cinder.admin}/volumes/${id}`;
    act = `${vol}/action`;
  });

  it('02: os-reserve → attaching, os-unreserve → available', async () => {
    expectRecorded(await call(act, 'POST', { ...admin(), body: { 'os-reserve': null } }), recorded(C02, 'os-reserve'));
    expectRecorded(await call(vol, 'GET', admin()), recorded(C02, 'GET after os-reserve'));
    expectRecorded(
      await call(act, 'POST', { ...admin(), body: { 'os-unreserve': null } }),
      recorded(C02, 'os-unreserve'),
    );
    expectRecorded(await call(vol, 'GET', admin()), recorded(C02, 'GET after os-unreserve'));
  });

  it('03: legacy reserve → initialize_connection → attach', async () => {
    expectRecorded(
      await call(act, 'POST', { ...admin(), body: { 'os-reserve': null } }),
      recorded(C03, 'os-reserve (legacy Nova flow step 1)'),
    );
    expectRecorded(
      await call(act, 'POST', { ...admin(), body: { 'os-initialize_connection': { connector: CONNECTOR } } }),
      recorded(C03, 'os-initialize_connection (legacy step 2)'),
    );
    expectRecorded(
      await call(act, 'POST', {
        ...admin(),
        body: {
          'os-attach': { instance_uuid: '74e1db0b-fbc1-4477-91ee-2126c62d2cb0', mountpoint: '/dev/vdb', mode: 'rw' },
        },
      }),
      recorded(C03, 'os-attach (legacy step 3)'),
    );
    expectRecorded(await call(vol, 'GET', admin()), recorded(C03, 'GET after os-attach (status + attachments)'));
    expectRecorded(
      await call(`${c.cinder.admin}/volumes/detail`, 'GET', admin()),
      recorded(C03, 'GET /volumes/detail while in-use'),
    );
  });

  it('04: begin/roll detaching, terminate_connection, detach (with and without an id)', async () => {
    expectRecorded(
      await call(act, 'POST', { ...admin(), body: { 'os-begin_detaching': null } }),
      recorded(C04, 'os-begin_detaching'),
    );
    expectRecorded(await call(vol, 'GET', admin()), recorded(C04, 'GET after os-begin_detaching'));
    expectRecorded(
      await call(act, 'POST', { ...admin(), body: { 'os-roll_detaching': null } }),
      recorded(C04, 'os-roll_detaching'),
    );
    expectRecorded(await call(vol, 'GET', admin()), recorded(C04, 'GET after os-roll_detaching'));
    expectRecorded(
      await call(act, 'POST', { ...admin(), body: { 'os-begin_detaching': null } }),
      recorded(C04, 'os-begin_detaching (again, as Nova does before detach)'),
    );
    expectRecorded(
      await call(act, 'POST', { ...admin(), body: { 'os-terminate_connection': { connector: CONNECTOR } } }),
      recorded(C04, 'os-terminate_connection'),
    );
    const attachmentId = c.sim.volume(id)!.attachments[0]!.id;
    expectRecorded(
      await call(act, 'POST', { ...admin(), body: { 'os-detach': { attachment_id: attachmentId } } }),
      recorded(C04, 'os-detach'),
    );
    expectRecorded(await call(vol, 'GET', admin()), recorded(C04, 'GET after os-detach'));
    expectRecorded(
      await call(act, 'POST', {
        ...admin(),
        body: { 'os-attach': { instance_uuid: '40e11686-3573-416d-bcb4-393400b93db0', mountpoint: '/dev/vdc' } },
      }),
      recorded(C04, "os-attach directly from 'available' (no os-reserve) with host_name"),
    );
    expectRecorded(await call(vol, 'GET', admin()), recorded(C04, 'GET after direct os-attach'));
    const second = c.sim.volume(id)!.attachments[0]!.id;
    expectRecorded(
      await call(act, 'POST', { ...admin(), body: { 'os-detach': {} } }),
      recorded(C04, 'os-detach without attachment_id (single attachment)'),
    );
    expectRecorded(await call(vol, 'GET', admin()), recorded(C04, 'GET after os-detach without attachment_id'));
    expectRecorded(
      await call(act, 'POST', { ...admin(), body: { 'os-detach': { attachment_id: second } } }),
      recorded(C04, 'ERROR os-detach again with the (now deleted) attachment_id'),
    );
  });

  it('05: attachments API — reserve, connector update, complete, delete', async () => {
    const att = `${c.cinder.admin}/attachments`;
    const inst = '295f80ce-4aa2-45ab-b895-a7d650f8cb7e';
    expectRecorded(
      await call(att, 'POST', {
        ...admin(),
        mv: 'volume 3.26',
        body: { attachment: { volume_uuid: id, instance_uuid: inst } },
      }),
      recorded(C05, 'POST /attachments at mv 3.26 (too old) -> 404'),
    );
    const created = await call(att, 'POST', {
      ...admin(),
      mv: 'volume 3.27',
      body: { attachment: { volume_uuid: id, instance_uuid: inst } },
    });
    expectRecorded(created, recorded(C05, 'POST /attachments (3.27, no connector => reserved)'));
    const aid = created.json.attachment.id as string;
    expectRecorded(
      await call(vol, 'GET', { ...admin(), mv: 'volume 3.27' }),
      recorded(C05, 'GET volume after attachment create'),
    );
    expectRecorded(
      await call(`${att}/${aid}`, 'GET', { ...admin(), mv: 'volume 3.27' }),
      recorded(C05, 'GET /attachments/{id}'),
    );
    expectRecorded(await call(att, 'GET', { ...admin(), mv: 'volume 3.27' }), recorded(C05, 'GET /attachments (list)'));
    expectRecorded(
      await call(`${att}/detail`, 'GET', { ...admin(), mv: 'volume 3.27' }),
      recorded(C05, 'GET /attachments/detail'),
    );
    expectRecorded(
      await call(`${att}/${aid}`, 'PUT', {
        ...admin(),
        mv: 'volume 3.27',
        body: { attachment: { connector: CONNECTOR } },
      }),
      recorded(C05, 'PUT /attachments/{id} with connector (3.27)'),
    );
    expectRecorded(
      await call(vol, 'GET', { ...admin(), mv: 'volume 3.27' }),
      recorded(C05, 'GET volume after attachment update'),
    );
    expectRecorded(
      await call(`${att}/${aid}`, 'GET', { ...admin(), mv: 'volume 3.27' }),
      recorded(C05, 'GET /attachments/{id} after update'),
    );
    expectRecorded(
      await call(`${att}/${aid}/action`, 'POST', { ...admin(), mv: 'volume 3.43', body: { 'os-complete': null } }),
      recorded(C05, 'POST /attachments/{id}/action os-complete at 3.43 (too old)'),
    );
    expectRecorded(
      await call(`${att}/${aid}/action`, 'POST', { ...admin(), mv: 'volume 3.44', body: { 'os-complete': null } }),
      recorded(C05, 'POST /attachments/{id}/action os-complete (3.44)'),
    );
    expectRecorded(
      await call(vol, 'GET', { ...admin(), mv: 'volume 3.44' }),
      recorded(C05, 'GET volume after os-complete'),
    );
    expectRecorded(
      await call(`${att}/${aid}`, 'GET', { ...admin(), mv: 'volume 3.44' }),
      recorded(C05, 'GET /attachments/{id} after os-complete'),
    );
    // The instance is unknown to Nova here, so the bug #2004555 guard lets a user delete it.
    expectRecorded(
      await call(`${att}/${aid}`, 'DELETE', { ...admin(), mv: 'volume 3.27' }),
      recorded(C05, 'DELETE /attachments/{id} with X-Service-Roles: service'),
    );
    expectRecorded(
      await call(vol, 'GET', { ...admin(), mv: 'volume 3.27' }),
      recorded(C05, 'GET volume after attachment delete'),
    );
    const reserved = await call(att, 'POST', {
      ...admin(),
      mv: 'volume 3.27',
      body: { attachment: { volume_uuid: id, instance_uuid: '5f87e231-0f58-40ab-9e92-60ba7c418387' } },
    });
    expectRecorded(
      reserved,
      recorded(C05, 'POST /attachments (reserve only) then DELETE it as plain user (allowed: no connection_info)'),
    );
    expectRecorded(
      await call(`${att}/${reserved.json.attachment.id}`, 'DELETE', { ...admin(), mv: 'volume 3.27' }),
      recorded(C05, 'DELETE reserved-only attachment as plain user'),
    );
    expectRecorded(await call(vol, 'GET', admin()), recorded(C05, 'GET volume after deleting reserved attachment'));
    const withConn = await call(att, 'POST', {
      ...admin(),
      mv: 'volume 3.54',
      body: {
        attachment: {
          volume_uuid: id,
          instance_uuid: '18bb0ba5-f0b9-402a-8b60-53e07007c414',
          connector: CONNECTOR,
          mode: 'rw',
        },
      },
    });
    expectRecorded(withConn, recorded(C05, 'POST /attachments with connector + mode (3.54)'));
    expectRecorded(
      await call(vol, 'GET', { ...admin(), mv: 'volume 3.54' }),
      recorded(C05, 'GET volume after attachment create with connector'),
    );
    expectRecorded(
      await call(`${att}/${withConn.json.attachment.id}/action`, 'POST', {
        ...admin(),
        mv: 'volume 3.54',
        body: { 'os-complete': null },
      }),
      recorded(C05, 'POST os-complete'),
    );
    expectRecorded(
      await call(vol, 'GET', { ...admin(), mv: 'volume 3.54' }),
      recorded(C05, 'GET volume (in-use via attachments API)'),
    );
  });

  it('08: a second attach of the in-use volume is refused (legacy: with the traceback in the message)', async () => {
    expectRecorded(
      await call(act, 'POST', {
        ...admin(),
        body: { 'os-attach': { instance_uuid: 'ad0ef545-12f2-4870-ac11-c10b544000b0', mountpoint: '/dev/vdd' } },
      }),
      recorded(C08, 'ERROR os-attach a 2nd instance to in-use non-multiattach volume'),
    );
    expectRecorded(
      await call(`${c.cinder.admin}/attachments`, 'POST', {
        ...admin(),
        mv: 'volume 3.27',
        body: { attachment: { volume_uuid: id, instance_uuid: 'ad0ef545-12f2-4870-ac11-c10b544000b0' } },
      }),
      recorded(C08, 'ERROR POST /attachments for 2nd instance on in-use non-multiattach volume'),
    );
  });

  it('08: online extend at 3.42 and a forced snapshot of the in-use volume', async () => {
    expectRecorded(
      await call(act, 'POST', { ...admin(), mv: 'volume 3.42', body: { 'os-extend': { new_size: 2 } } }),
      recorded(C08, 'os-extend an in-use volume at mv 3.42 (online extend) 1->2'),
    );
    expect(c.sim.volume(id)!.status).toBe('extending');
    await until(() => c.sim.volume(id)?.status === 'in-use', "c.sim.volume(id)?.status === 'in-use'");
    expectRecorded(await call(vol, 'GET', admin()), recorded(C08, 'GET after in-use extend'));
    const snap = await call(`${c.cinder.admin}/snapshots`, 'POST', {
      ...admin(),
      body: { snapshot: { volume_id: id, name: 's-force', force: true } },
    });
    expectRecorded(snap, recorded(C08, 'POST /snapshots of in-use volume with force=true'));
    await until(
      async () =>
        (await call(`${c.cinder.admin}/snapshots/${snap.json.snapshot.id}`, 'GET', admin())).json.snapshot.status ===
        'available',
      "(await call(`${c.cinder.admin}/snapshots/${snap.json.snapshot.id}`, 'GET', admin())).json.snapshot.status === 'available'",
    );
    expectRecorded(
      await call(`${c.cinder.admin}/snapshots/${snap.json.snapshot.id}`, 'DELETE', admin()),
      recorded(C08, 'DELETE that snapshot'),
    );
    const aid = c.sim.volume(id)!.attachments[0]!.id;
    expectRecorded(
      await call(`${c.cinder.admin}/attachments/${aid}`, 'DELETE', { ...admin(), mv: 'volume 3.27' }),
      recorded(C08, 'DELETE /attachments/{id} (cleanup, service role)'),
    );
    expectRecorded(await call(vol, 'GET', admin()), recorded(C08, 'GET volume after cleanup'));
  });
});
