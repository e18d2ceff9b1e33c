/**
 * Cinder actions by unified name through the adapter's action table, against the real simulator:
 * the wire key each one sends (read from the request log), its answer, its completion rule driven
 * to the end, microversion refusals before any call, and Cinder's user messages as a failure
 * signal for a change whose status looks done.
 */
import type { VolumeRef } from '../../adapters/contract/model';
import { calls, drive, startAdapterCloud, type AdapterCloud } from './openstack-helpers';

let c: AdapterCloud;
const ref = (nativeId: string): VolumeRef => ({ backend: 'os', namespace: c.p.demo, nativeId });
/** Action keys Cinder received, in order. */
const actionKeys = (): string[] =>
  c.sim.requests().flatMap((e) => (e.service === 'cinder' && e.action ? [e.action] : []));

beforeEach(async () => {
  c = await startAdapterCloud();
});
afterEach(() => c.close());

describe('OpenStack adapter: Cinder actions by unified name', () => {
  it('should send each action under its wire key and finish the ones Cinder finishes when answering', async () => {
    const id = c.sim.seedVolume({ project: 'demo', name: 'v' });
    c.sim.clearRequests();
    const reset = await c.backend.runVolumeAction(
      ref(id),
      { action: 'resetStatus', status: 'ERROR', attachStatus: 'DETACHED', migrationStatus: 'NONE' },
      c.as.admin,
    );
    expect(reset).toEqual({ result: {}, pending: null });
    expect(c.sim.volume(id)!.status).toBe('error');
    await c.backend.runVolumeAction(ref(id), { action: 'resetStatus', status: 'AVAILABLE' }, c.as.admin);
    await c.backend.runVolumeAction(ref(id), { action: 'setBootable', bootable: true }, c.as.demo);
    expect(c.sim.volume(id)!.bootable).toBe(true);
    const set = await c.backend.runVolumeAction(
      ref(id),
      {
        action: 'setImageMetadata',
        metadata: [
          { key: 'os_distro', value: 'debian' },
          { key: 'a', value: '1' },
        ],
      },
      c.as.demo,
    );
    expect(set.result.imageMetadata).toEqual([
      { key: 'a', value: '1' },
      { key: 'os_distro', value: 'debian' },
    ]);
    await c.backend.runVolumeAction(ref(id), { action: 'unsetImageMetadata', key: 'a' }, c.as.demo);
    expect(await c.backend.showImageMetadata(ref(id), c.as.demo)).toEqual([{ key: 'os_distro', value: 'debian' }]);
    await c.backend.runVolumeAction(ref(id), { action: 'setReadonly', readonly: true }, c.as.admin);
    await c.backend.runVolumeAction(ref(id), { action: 'reserve' }, c.as.demo);
    // Cinder's legacy reserve marks the volume `attaching` (the attachments API's is `reserved`).
    expect(c.sim.volume(id)!.status).toBe('attaching');
    await c.backend.runVolumeAction(ref(id), { action: 'unreserve' }, c.as.demo);
    const init = await c.backend.runVolumeAction(
      ref(id),
      { action: 'initializeConnection', connector: { host: 'node-1', initiator: 'iqn.x', osType: 'linux2' } },
      c.as.admin,
    );
    expect(init.result.connectionInfo).toEqual(expect.objectContaining({ driver_volume_type: expect.any(String) }));
    expect(actionKeys()).toEqual([
      'os-reset_status',
      'os-reset_status',
      'os-set_bootable',
      'os-set_image_metadata',
      'os-unset_image_metadata',
      'os-show_image_metadata',
      'os-update_readonly_flag',
      'os-reserve',
      'os-unreserve',
      'os-initialize_connection',
    ]);
  });

  it("should refuse what the table or Cinder's words cannot express before any call", async () => {
    const id = c.sim.seedVolume({ project: 'demo', name: 'v' });
    c.sim.clearRequests();
    const refusals = [
      { action: 'resetStatus' as const, status: 'OTHER' as const },
      { action: 'resetStatus' as const },
      { action: 'revertToSnapshot' as const, snapshotId: 'latest' },
      { action: 'legacyAttach' as const, mountpoint: '/dev/vdb', readOnly: false },
      { action: 'migrate' as const },
      { action: 'reimage' as const, imageId: 'debian', reimageReserved: false },
    ];
    for (const a of refusals)
      await expect(c.backend.runVolumeAction(ref(id), a, c.as.admin)).rejects.toMatchObject({ code: 'BAD_USER_INPUT' });
    await expect(c.backend.runVolumeAction(ref('nope'), { action: 'reserve' }, c.as.demo)).rejects.toMatchObject({
      code: 'BAD_USER_INPUT',
      field: 'volumeId',
    });
    expect(actionKeys()).toEqual([]);
  });

  it("should refuse an action the cloud's microversion is too old for, naming both versions, without sending it", async () => {
    const id = c.sim.seedVolume({ project: 'demo', name: 'v', status: 'extending' });
    c.sim.clearRequests();
    // The simulator is Cinder 21.3.1 as recorded: 3.70, one short of os-extend_volume_completion.
    const err = await c.backend
      .runVolumeAction(ref(id), { action: 'completeExtend', error: false }, c.as.admin)
      .catch((e: unknown) => e);
    expect(err).toMatchObject({
      code: 'UNSUPPORTED_BY_BACKEND',
      message:
        'backend "os" cannot do completing a volume extend: it needs Cinder microversion 3.71, the cloud offers up to 3.70',
    });
    expect(actionKeys()).toEqual([]);

    await c.close();
    c = await startAdapterCloud({ cinderMaxVersion: '3.60' });
    const old = c.sim.seedVolume({ project: 'demo', name: 'old' });
    await expect(
      c.backend.runVolumeAction(
        ref(old),
        { action: 'reimage', imageId: 'a0000000-0000-4000-8000-000000000001', reimageReserved: false },
        c.as.demo,
      ),
    ).rejects.toMatchObject({
      code: 'UNSUPPORTED_BY_BACKEND',
      message: expect.stringContaining('reimaging: it needs Cinder microversion 3.68'),
    });
    expect(actionKeys()).toEqual([]);
  });

  it('should complete extends through the table where the cloud has 3.71', async () => {
    await c.close();
    c = await startAdapterCloud({ cinderMaxVersion: '3.71' });
    const server = c.sim.seedServer({ project: 'demo', name: 's' });
    const id = c.sim.seedVolume({ project: 'demo', name: 'grow', size: 1 });
    c.sim.setDelays({ extendMs: 10_000 });
    c.sim.attachNow(server, id);
    await c.backend.extendVolume(ref(id), 2 * 1024 ** 3, c.as.demo);
    expect(c.sim.volume(id)!.status).toBe('extending');
    expect(await c.backend.runVolumeAction(ref(id), { action: 'completeExtend', error: false }, c.as.admin)).toEqual({
      result: {},
      pending: null,
    });
    expect(c.sim.volume(id)).toMatchObject({ status: 'in-use', size: 2 });
    expect(actionKeys()).toContain('os-extend_volume_completion');
  });
});

describe('OpenStack adapter: Cinder actions that run on', () => {
  it('should revert to a snapshot and succeed once Cinder leaves reverting', async () => {
    const id = c.sim.seedVolume({ project: 'demo', name: 'v' });
    const snap = c.sim.seedSnapshot({ volumeId: id, name: 's' });
    c.sim.setDelays({ revertMs: 200 }); // long enough for the first check to see it under way
    const a = await c.backend.runVolumeAction(ref(id), { action: 'revertToSnapshot', snapshotId: snap }, c.as.demo);
    expect(a.pending!.rule).toEqual({
      name: 'volumeSettles',
      params: { volumeId: id, leaves: 'REVERTING', cinderRequestId: expect.stringMatching(/^req-/) },
      seen: {},
    });
    const d = await drive(c.backend, a.pending, c.as.demo);
    expect(d.checks[0]!.progress).toEqual({ state: 'RUNNING', backendStatus: 'reverting' });
    expect(d.last).toEqual({ state: 'SUCCEEDED', backendStatus: 'available' });
  });

  it('should retype and upload to an image, each settling; an upload Cinder wrote a failure for is FAILED', async () => {
    c.sim.addVolumeType({ name: 'fast' });
    const id = c.sim.seedVolume({ project: 'demo', name: 'v' });
    const retype = await c.backend.runVolumeAction(
      ref(id),
      { action: 'retype', newType: 'fast', onDemandMigration: false },
      c.as.demo,
    );
    expect((await drive(c.backend, retype.pending, c.as.demo)).last).toEqual({
      state: 'SUCCEEDED',
      backendStatus: 'available',
    });
    expect(await c.backend.getVolume(ref(id), c.as.demo)).toMatchObject({ details: { volumeType: 'fast' } });

    const up = await c.backend.runVolumeAction(
      ref(id),
      { action: 'uploadToImage', imageName: 'img', diskFormat: 'raw' },
      c.as.demo,
    );
    expect(up.result.image).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      name: 'img',
      diskFormat: 'raw',
      containerFormat: expect.any(String),
    });
    expect((await drive(c.backend, up.pending, c.as.demo)).last).toEqual({
      state: 'SUCCEEDED',
      backendStatus: 'available',
    });

    // A failed copy returns the volume to `available` too; Cinder's message for the request tells.
    const again = await c.backend.runVolumeAction(ref(id), { action: 'uploadToImage', imageName: 'img2' }, c.as.demo);
    const requestId = again.pending!.rule.params.cinderRequestId as string;
    c.sim.seedUserMessage({
      project: 'demo',
      volumeId: id,
      action: 'COPY_VOLUME_TO_IMAGE',
      detail: 'UNKNOWN_ERROR',
      requestId,
    });
    const d = await drive(c.backend, again.pending, c.as.demo);
    expect(d.last).toEqual({
      state: 'FAILED',
      backendStatus: 'available',
      reason: 'Cinder reported a failure: copy volume to image:An unknown error occurred.',
    });
    expect(calls(c.sim.requests(), 'cinder').filter((x) => x.startsWith('GET /v3/{p}/messages'))).toHaveLength(3);
  });

  it('should migrate (admin) until Cinder reports success, and unmanage or force-delete until the volume is gone', async () => {
    const id = c.sim.seedVolume({ project: 'demo', name: 'm' });
    const m = await c.backend.runVolumeAction(
      ref(id),
      { action: 'migrate', host: 'real-cinder@fake2#fake2' },
      c.as.admin,
    );
    expect(m.pending!.rule.name).toBe('volumeMigrate');
    expect((await drive(c.backend, m.pending, c.as.admin)).last).toEqual({
      state: 'SUCCEEDED',
      backendStatus: 'available',
    });

    const u = c.sim.seedVolume({ project: 'demo', name: 'u' });
    const un = await c.backend.runVolumeAction(ref(u), { action: 'unmanage' }, c.as.admin);
    expect(un.pending!.rule.name).toBe('volumeGone');
    expect((await drive(c.backend, un.pending, c.as.admin)).last).toEqual({
      state: 'SUCCEEDED',
      backendStatus: 'deleted',
    });

    const f = c.sim.seedVolume({ project: 'demo', name: 'f', status: 'error' });
    const fd = await c.backend.runVolumeAction(ref(f), { action: 'forceDelete' }, c.as.admin);
    expect((await drive(c.backend, fd.pending, c.as.admin)).last).toEqual({
      state: 'SUCCEEDED',
      backendStatus: 'deleted',
    });
    expect(actionKeys()).toEqual(['os-migrate_volume', 'os-unmanage', 'os-force_delete']);
  });
});

describe('OpenStack adapter: changing a server attachment through Nova', () => {
  it('should swap volumes until Nova lists the new one, and set deleteOnTermination at once', async () => {
    const server = c.sim.seedServer({ project: 'demo', name: 's' });
    const old = c.sim.seedVolume({ project: 'demo', name: 'old' });
    const next = c.sim.seedVolume({ project: 'demo', name: 'new' });
    c.sim.attachNow(server, old);
    const swap = await c.backend.updateServerAttachment(server, old, { newVolumeId: next }, c.as.admin);
    expect(swap.pending!.rule).toEqual({
      name: 'serverAttachmentUpdate',
      params: { serverId: server, volumeId: old, newVolumeId: next, novaRequestId: expect.stringMatching(/^req-/) },
      seen: {},
    });
    expect((await drive(c.backend, swap.pending, c.as.admin)).last).toEqual({
      state: 'SUCCEEDED',
      backendStatus: null,
    });
    expect(
      (await c.backend.listServerAttachments([server], c.as.demo))
        .get(server)!
        .map((a) => [a.volume.nativeId, a.state]),
    ).toEqual([[next, 'ATTACHED']]);

    expect(await c.backend.updateServerAttachment(server, next, { deleteOnTermination: true }, c.as.demo)).toEqual({
      result: undefined,
      pending: null,
    });
    expect(c.sim.server(server)!.bdms.find((b) => b.volumeId === next)!.deleteOnTermination).toBe(true);
    await expect(c.backend.updateServerAttachment(server, next, {}, c.as.demo)).rejects.toMatchObject({
      code: 'BAD_USER_INPUT',
    });
  });

  it('should read servers by id, keyed as asked, and leave out unknown ones', async () => {
    const a = c.sim.seedServer({ project: 'demo', name: 'a' });
    const theirs = c.sim.seedServer({ project: 'other', name: 'b' });
    const got = await c.backend.getServers([a.toUpperCase(), theirs, 'junk'], c.as.demo);
    expect([...got.keys()]).toEqual([a.toUpperCase()]);
    expect(got.get(a.toUpperCase())).toMatchObject({
      backend: 'os',
      projectId: c.p.demo,
      id: a,
      name: 'a',
      status: 'ACTIVE',
    });
  });
});
