/**
 * Cinder's asynchronous operations with configurable delays: snapshots and revert
 * (cinder-21/07), extend failures and user messages, retype, upload, migration, re-image,
 * unmanage, force delete, 3.71's os-extend_volume_completion, and the delay controls.
 */
import { call, expectRecorded, FAST, keys, recorded, sleep, startCloud, type Cloud } from './openstack-helpers';
import { until } from '../support/until';

const C07 = 'cinder-21/07-snapshots-revert.md';

let c: Cloud;
beforeAll(async () => {
  c = await startCloud();
});
afterAll(async () => {
  await c.sim.close();
});

const action = (id: string, body: object, mv?: string): ReturnType<typeof call> =>
  call(`${c.cinder.admin}/volumes/${id}/action`, 'POST', { token: c.t.admin, body, ...(mv ? { mv } : {}) });

describe('snapshots and revert (cinder-21/07)', () => {
  it('should replay the recorded snapshot/revert flow', async () => {
    // Long enough that the in-between states (0%, reverting, restoring) are still there when
    // read back on a loaded machine; the flow waits for the end states anyway.
    c.sim.setDelays({ snapshotMs: 500, revertMs: 500 });
    const id = c.sim.seedVolume({
      project: 'admin',
      user: 'admin',
      name: 'vol-a-renamed',
      description: 'renamed',
      size: 3,
      metadata: { purpose: 'transcript' },
    });
    const snaps = `${c.cinder.admin}/snapshots`;
    const created = await call(snaps, 'POST', {
      token: c.t.admin,
      body: { snapshot: { volume_id: id, name: 'snap-1', description: 'first snap' } },
    });
    expectRecorded(created, recorded(C07, 'POST /snapshots'));
    const s1 = created.json.snapshot.id as string;
    expect(
      (await call(`${snaps}/${s1}`, 'GET', { token: c.t.admin })).json.snapshot[
        'os-extended-snapshot-attributes:progress'
      ],
    ).toBe('0%');
    await until(
      async () => (await call(`${snaps}/${s1}`, 'GET', { token: c.t.admin })).json.snapshot.status === 'available',
      "(await call(`${snaps}/${s1}`, 'GET', { token: c.t.admin })).json.snapshot.status === 'available'",
    );
    expectRecorded(await call(snaps, 'GET', { token: c.t.admin }), recorded(C07, 'GET /snapshots'));
    expectRecorded(await call(`${snaps}/detail`, 'GET', { token: c.t.admin }), recorded(C07, 'GET /snapshots/detail'));
    expectRecorded(await call(`${snaps}/${s1}`, 'GET', { token: c.t.admin }), recorded(C07, 'GET /snapshots/{id}'));
    expectRecorded(
      await call(`${snaps}/${s1}`, 'GET', { token: c.t.admin, mv: 'volume 3.70' }),
      recorded(C07, 'GET /snapshots/{id} mv 3.70'),
    );
    expectRecorded(
      await action(id, { revert: { snapshot_id: s1 } }, 'volume 3.39'),
      recorded(C07, 'revert at mv 3.39 (too old)'),
    );
    expectRecorded(
      await action(id, { revert: { snapshot_id: s1 } }, 'volume 3.40'),
      recorded(C07, 'revert to snapshot (3.40)'),
    );
    expect(c.sim.volume(id)!.status).toBe('reverting');
    expect((await call(`${snaps}/${s1}`, 'GET', { token: c.t.admin })).json.snapshot.status).toBe('restoring');
    await until(() => c.sim.volume(id)?.status === 'available', "c.sim.volume(id)?.status === 'available'");
    expectRecorded(
      await call(`${snaps}/${s1}`, 'GET', { token: c.t.admin }),
      recorded(C07, 'GET snapshot after revert'),
    );
    const second = await call(snaps, 'POST', {
      token: c.t.admin,
      body: { snapshot: { volume_id: id, name: 'snap-2' } },
    });
    expectRecorded(second, recorded(C07, 'POST /snapshots (second)'));
    const s2 = second.json.snapshot.id as string;
    await until(
      async () => (await call(`${snaps}/${s2}`, 'GET', { token: c.t.admin })).json.snapshot.status === 'available',
      "(await call(`${snaps}/${s2}`, 'GET', { token: c.t.admin })).json.snapshot.status === 'available'",
    );
    expectRecorded(
      await action(id, { revert: { snapshot_id: s1 } }, 'volume 3.40'),
      recorded(C07, 'ERROR revert to a snapshot that is not the latest'),
    );
    expectRecorded(
      await call(`${c.cinder.admin}/volumes/${id}`, 'DELETE', { token: c.t.admin }),
      recorded(C07, 'ERROR DELETE volume that has snapshots'),
    );
    expectRecorded(
      await call(`${snaps}/${s2}`, 'DELETE', { token: c.t.admin }),
      recorded(C07, 'DELETE /snapshots/{id} (snap-2)'),
    );
    expectRecorded(
      await call(`${snaps}/${s1}`, 'DELETE', { token: c.t.admin }),
      recorded(C07, 'DELETE /snapshots/{id} (snap-1)'),
    );
    await until(
      async () => (await call(`${snaps}/${s1}`, 'GET', { token: c.t.admin })).status === 404,
      "(await call(`${snaps}/${s1}`, 'GET', { token: c.t.admin })).status === 404",
    );
    expectRecorded(await call(`${snaps}/${s1}`, 'GET', { token: c.t.admin }), recorded(C07, 'GET deleted snapshot'));
    expectRecorded(await call(snaps, 'GET', { token: c.t.admin }), recorded(C07, 'GET /snapshots (empty again)'));
    c.sim.setDelays({ snapshotMs: FAST.snapshotMs, revertMs: FAST.revertMs });
  });

  it('should refuse a revert while the volume is busy with 409, and snapshot in-use volumes from 3.66 without force', async () => {
    const server = c.sim.seedServer({ project: 'admin', name: 'snapper' });
    const id = c.sim.seedVolume({ project: 'admin', size: 1 });
    const snap = c.sim.seedSnapshot({ volumeId: id });
    c.sim.attachNow(server, id);
    const r = await action(id, { revert: { snapshot_id: snap } }, 'volume 3.40');
    expect(r.json).toEqual({
      conflictingRequest: {
        code: 409,
        message: `Invalid volume: Can't revert volume ${id} to its latest snapshot. Volume's status must be 'available'.`,
      },
    });
    const ok = await call(`${c.cinder.admin}/snapshots`, 'POST', {
      token: c.t.admin,
      mv: 'volume 3.66',
      body: { snapshot: { volume_id: id } },
    });
    expect(ok.status).toBe(202);
    expect(keys(ok.json.snapshot)).toEqual([
      'id',
      'created_at',
      'updated_at',
      'name',
      'description',
      'volume_id',
      'status',
      'size',
      'metadata',
      'group_snapshot_id',
      'user_id',
      'consumes_quota',
    ]);
    const bad = await call(`${c.cinder.admin}/snapshots`, 'POST', {
      token: c.t.admin,
      mv: 'volume 3.66',
      body: { snapshot: { volume_id: id, force: false } },
    });
    expect(bad.status).toBe(400);
  });
});

describe('extend failures and user messages', () => {
  it('should end an injected extend failure in error_extending with the EXTEND_VOLUME message', async () => {
    const id = c.sim.seedVolume({ project: 'demo', size: 1 });
    c.sim.failNextExtend(id);
    const r = await call(`${c.cinder.demo}/volumes/${id}/action`, 'POST', {
      token: c.t.demo,
      body: { 'os-extend': { new_size: 5 } },
    });
    expect(r.status).toBe(202);
    expect(c.sim.volume(id)!.status).toBe('extending');
    await until(() => c.sim.volume(id)?.status === 'error_extending', "c.sim.volume(id)?.status === 'error_extending'");
    expect(c.sim.volume(id)!.size).toBe(1);
    expect((await call(`${c.cinder.demo}/messages`, 'GET', { token: c.t.demo })).json).toEqual({
      itemNotFound: { code: 404, message: 'The resource could not be found.' },
    });
    const msgs = await call(`${c.cinder.demo}/messages`, 'GET', { token: c.t.demo, mv: 'volume 3.3' });
    expect(msgs.status).toBe(200);
    const m = msgs.json.messages.find((x: { resource_uuid: string }) => x.resource_uuid === id);
    expect(keys(m)).toEqual([
      'id',
      'event_id',
      'user_message',
      'message_level',
      'created_at',
      'guaranteed_until',
      'request_id',
      'links',
      'resource_type',
      'resource_uuid',
    ]);
    expect(m).toMatchObject({
      event_id: 'VOLUME_VOLUME_007_010',
      user_message: 'extend volume:Volume Driver failed to extend volume.',
      message_level: 'ERROR',
      resource_type: 'VOLUME',
      request_id: r.headers['x-openstack-request-id'],
    });
    expect(
      (await call(`${c.cinder.demo}/messages/${m.id}`, 'GET', { token: c.t.demo, mv: 'volume 3.3' })).json.message.id,
    ).toBe(m.id);
    expect(
      (await call(`${c.cinder.other}/messages/${m.id}`, 'GET', { token: c.t.other, mv: 'volume 3.3' })).status,
    ).toBe(404);
    const filtered = await call(`${c.cinder.demo}/messages?resource_uuid=${id}`, 'GET', {
      token: c.t.demo,
      mv: 'volume 3.5',
    });
    expect(filtered.json.messages).toHaveLength(1);
    expect(
      (await call(`${c.cinder.demo}/messages/${m.id}`, 'DELETE', { token: c.t.demo, mv: 'volume 3.3' })).status,
    ).toBe(204);
    // error_extending volumes can be deleted (and reset by an admin)
    expect((await call(`${c.cinder.demo}/volumes/${id}`, 'DELETE', { token: c.t.demo })).status).toBe(202);
  });

  it('should complete attached extends through os-extend_volume_completion on a 3.71 Cinder only', async () => {
    const { sim, t, cinder } = await startCloud({ cinderMaxVersion: '3.71', delays: { extendMs: 10_000 } });
    try {
      const token = t.admin;
      const base = cinder.admin;
      const server = sim.seedServer({ project: 'admin', name: 's' });
      const id = sim.seedVolume({ project: 'admin', size: 1 });
      sim.attachNow(server, id);
      expect(
        (
          await call(`${base}/volumes/${id}/action`, 'POST', {
            token,
            mv: 'volume 3.71',
            body: { 'os-extend': { new_size: 2 } },
          })
        ).status,
      ).toBe(202);
      const done = await call(`${base}/volumes/${id}/action`, 'POST', {
        token,
        mv: 'volume 3.71',
        body: { 'os-extend_volume_completion': { error: false } },
      });
      expect(done.status).toBe(202);
      expect(sim.volume(id)).toMatchObject({ status: 'in-use', size: 2 });
    } finally {
      await sim.close();
    }
    const absent = await action(c.sim.seedVolume({ project: 'admin' }), {
      'os-extend_volume_completion': { error: false },
    });
    expect(absent.json.badRequest.message).toBe(
      'There is no such action: os-extend_volume_completion. Verify the request body and Content-Type header and try again.',
    );
  });
});

describe('retype, upload, migrate, re-image, unmanage, force delete', () => {
  it('should retype through retyping, turning a volume multiattach', async () => {
    c.sim.addVolumeType({ name: 'shared', extraSpecs: { multiattach: '<is> True' } });
    const id = c.sim.seedVolume({ project: 'admin' });
    expect((await action(id, { 'os-retype': { new_type: 'shared', migration_policy: 'never' } })).status).toBe(202);
    expect(c.sim.volume(id)!.status).toBe('retyping');
    await until(() => c.sim.volume(id)?.status === 'available', "c.sim.volume(id)?.status === 'available'");
    const v = (await call(`${c.cinder.admin}/volumes/${id}`, 'GET', { token: c.t.admin })).json.volume;
    expect(v).toMatchObject({ volume_type: 'shared', multiattach: true });
    expect((await action(id, { 'os-retype': { new_type: 'nope' } })).json.badRequest.message).toBe(
      'Invalid input received: Invalid volume_type passed: nope.',
    );
  });

  it('should upload to an image (force for in-use) through uploading', async () => {
    const id = c.sim.seedVolume({ project: 'admin', size: 2 });
    const r = await action(id, { 'os-volume_upload_image': { image_name: 'img', disk_format: 'qcow2' } }, 'volume 3.1');
    expect(r.status).toBe(202);
    expect(keys(r.json['os-volume_upload_image'])).toEqual([
      'id',
      'updated_at',
      'status',
      'display_description',
      'size',
      'volume_type',
      'image_id',
      'container_format',
      'disk_format',
      'image_name',
      'visibility',
      'protected',
    ]);
    expect(r.json['os-volume_upload_image']).toMatchObject({
      status: 'uploading',
      disk_format: 'qcow2',
      container_format: 'bare',
      visibility: 'private',
      protected: false,
    });
    await until(() => c.sim.volume(id)?.status === 'available', "c.sim.volume(id)?.status === 'available'");
    const server = c.sim.seedServer({ project: 'admin', name: 'up' });
    c.sim.attachNow(server, id);
    expect((await action(id, { 'os-volume_upload_image': { image_name: 'img' } })).json.badRequest.message).toBe(
      'Invalid volume: Volume status is in-use.',
    );
    expect((await action(id, { 'os-volume_upload_image': { image_name: 'img', force: true } })).status).toBe(202);
    await until(() => c.sim.volume(id)?.status === 'in-use', "c.sim.volume(id)?.status === 'in-use'");
  });

  it('should migrate (admin) through migration_status starting → migrating → success', async () => {
    const id = c.sim.seedVolume({ project: 'admin' });
    expect((await action(id, { 'os-migrate_volume': { host: 'real-cinder@fake#fake' } })).json.badRequest.message).toBe(
      'Invalid host: Destination host must be different than the current host.',
    );
    expect(
      (await action(id, { 'os-migrate_volume': { host: 'real-cinder@fake2#fake2', lock_volume: true } })).status,
    ).toBe(202);
    expect(c.sim.volume(id)).toMatchObject({ migrationStatus: 'starting', status: 'maintenance' });
    await until(
      () => c.sim.volume(id)?.migrationStatus === 'success',
      "c.sim.volume(id)?.migrationStatus === 'success'",
    );
    const v = (await call(`${c.cinder.admin}/volumes/${id}`, 'GET', { token: c.t.admin })).json.volume;
    expect(v).toMatchObject({
      status: 'available',
      migration_status: 'success',
      'os-vol-host-attr:host': 'real-cinder@fake2#fake2',
    });
    expect((await action(id, { 'os-migrate_volume_completion': { new_volume: id } })).json.badRequest.message).toBe(
      'Invalid volume: Source volume not mid-migration.',
    );
  });

  it('should re-image (>= 3.68) through downloading', async () => {
    const id = c.sim.seedVolume({ project: 'admin' });
    expect(
      (await action(id, { 'os-reimage': { image_id: 'a9a0e6a4-1111-4a52-8c2e-5b0e5f1d2c3b' } }, 'volume 3.67')).status,
    ).toBe(404);
    expect(
      (await action(id, { 'os-reimage': { image_id: 'a9a0e6a4-1111-4a52-8c2e-5b0e5f1d2c3b' } }, 'volume 3.68')).status,
    ).toBe(202);
    expect(c.sim.volume(id)!.status).toBe('downloading');
    await until(() => c.sim.volume(id)?.status === 'available', "c.sim.volume(id)?.status === 'available'");
    expect(c.sim.volume(id)).toMatchObject({
      bootable: true,
      imageMetadata: { image_id: 'a9a0e6a4-1111-4a52-8c2e-5b0e5f1d2c3b' },
    });
  });

  it('should unmanage and force delete (admin), still refusing attached volumes', async () => {
    const a = c.sim.seedVolume({ project: 'admin' });
    expect((await action(a, { 'os-unmanage': {} })).status).toBe(202);
    expect(c.sim.volume(a)!.status).toBe('unmanaging');
    await until(() => c.sim.volume(a) === undefined, 'c.sim.volume(a) === undefined');
    const b = c.sim.seedVolume({ project: 'admin', status: 'error_deleting' });
    expect((await call(`${c.cinder.admin}/volumes/${b}`, 'DELETE', { token: c.t.admin })).status).toBe(400);
    expect((await action(b, { 'os-force_delete': {} })).status).toBe(202);
    await until(() => c.sim.volume(b) === undefined, 'c.sim.volume(b) === undefined');
    const attached = c.sim.seedVolume({ project: 'admin' });
    c.sim.attachNow(c.sim.seedServer({ project: 'admin', name: 'fd' }), attached);
    expect((await action(attached, { 'os-force_delete': {} })).json.badRequest.message).toBe(
      'Invalid volume: Volume  must not be migrating, attached, belong to a group, have snapshots, awaiting a transfer, or be disassociated from snapshots after volume transfer.',
    );
  });

  it('should cascade-delete a volume with its snapshots', async () => {
    const id = c.sim.seedVolume({ project: 'admin' });
    const snap = c.sim.seedSnapshot({ volumeId: id });
    expect((await call(`${c.cinder.admin}/volumes/${id}?cascade=true`, 'DELETE', { token: c.t.admin })).status).toBe(
      202,
    );
    await until(() => c.sim.volume(id) === undefined, 'c.sim.volume(id) === undefined');
    expect((await call(`${c.cinder.admin}/snapshots/${snap}`, 'GET', { token: c.t.admin })).status).toBe(404);
  });
});

describe('delays', () => {
  it('should take creates as long as configured, changeable at runtime', async () => {
    // Long enough that a loaded machine still reads it under way: the first read follows the POST at once.
    c.sim.setDelays({ createMs: 600 });
    const t0 = Date.now();
    const r = await call(`${c.cinder.demo}/volumes`, 'POST', { token: c.t.demo, body: { volume: { size: 1 } } });
    const id = r.json.volume.id as string;
    expect(c.sim.volume(id)!.status).toBe('creating');
    await until(() => c.sim.volume(id)?.status === 'available', "c.sim.volume(id)?.status === 'available'");
    expect(Date.now() - t0).toBeGreaterThanOrEqual(600);
    c.sim.setDelays({ createMs: FAST.createMs });
  });

  it('should end an injected create failure in error with a scheduler message', async () => {
    c.sim.failNextCreate('doomed');
    const r = await call(`${c.cinder.demo}/volumes`, 'POST', {
      token: c.t.demo,
      body: { volume: { size: 1, name: 'doomed' } },
    });
    await until(
      () => c.sim.volume(r.json.volume.id)?.status === 'error',
      "c.sim.volume(r.json.volume.id)?.status === 'error'",
    );
    const msgs = await call(`${c.cinder.demo}/messages?resource_uuid=${r.json.volume.id}`, 'GET', {
      token: c.t.demo,
      mv: 'volume 3.5',
    });
    expect(msgs.json.messages[0].user_message).toBe(
      'schedule allocate volume:Could not find any available weighted backend.',
    );
  });

  it('should cancel pending transitions on close', async () => {
    const { sim, t, cinder } = await startCloud({ delays: { createMs: 50 } });
    const r = await call(`${cinder.demo}/volumes`, 'POST', { token: t.demo, body: { volume: { size: 1 } } });
    await sim.close();
    await sleep(70);
    expect(sim.volume(r.json.volume.id)!.status).toBe('creating');
  });
});
