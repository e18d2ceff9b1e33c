/**
 * The OpenStack adapter against the real simulator: volume reads (model v2, paging, the batch
 * strategy, read from the simulator's request log) and the volume changes driven to their end
 * through `checkChange` with the rule round-tripping through JSON between checks.
 */
import { encodeGlobalId } from '../../adapters/contract/ids';
import type { VolumeRef } from '../../adapters/contract/model';
import { LIST_STRATEGY_THRESHOLD } from '../../adapters/openstack/volumes/batch';

import { calls, drive, GIB, startAdapterCloud, type AdapterCloud } from './openstack-helpers';
import { until } from '../support/until';

let c: AdapterCloud;
const ref = (nativeId: string, namespace = c.p.demo): VolumeRef => ({ backend: 'os', namespace, nativeId });

beforeEach(async () => {
  c = await startAdapterCloud();
});
afterEach(() => c.close());

describe('OpenStack adapter: reading volumes', () => {
  it('should map a Cinder volume to model v2 with its typed details, sizes in bytes and times with a zone', async () => {
    const server = c.sim.seedServer({ project: 'demo', name: 'web-1' });
    const id = c.sim.seedVolume({
      project: 'demo',
      name: 'data',
      size: 2,
      metadata: { team: 'a' },
      volume_type: '__DEFAULT__',
    });
    c.sim.attachNow(server, id, { device: '/dev/vdb' });
    const v = (await c.backend.getVolume(ref(id), c.as.demo))!;
    expect(v).toMatchObject({
      __typename: 'Volume',
      ref: { backend: 'os', namespace: c.p.demo, nativeId: id },
      name: 'data',
      status: 'IN_USE',
      backendStatus: 'in-use',
      sizeBytes: 2 * GIB,
      complete: true,
      details: {
        __typename: 'CinderVolumeDetails',
        cinderStatus: 'IN_USE',
        sizeGiB: 2,
        volumeType: '__DEFAULT__',
        bootable: false,
        multiattach: false,
        metadata: [{ key: 'team', value: 'a' }],
      },
    });
    expect(v.createdAt).toMatch(/Z$/);
    expect(v.attachments).toEqual([
      expect.objectContaining({
        __typename: 'VolumeAttachment',
        consumerId: server,
        state: 'ATTACHED',
        stateReason: null,
        consumer: { __typename: 'VolumeServerConsumer', serverId: server, backend: 'os' },
        device: '/dev/vdb',
      }),
    ]);
    expect(v.attachments[0]!.nativeId).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('should keep an unknown Cinder status as OTHER in the details and UNKNOWN in the core', async () => {
    const id = c.sim.seedVolume({ project: 'demo', name: 'odd', status: 'error_managing_deleting' });
    const v = (await c.backend.getVolume(ref(id), c.as.demo))!;
    expect(v).toMatchObject({
      status: 'DELETING',
      backendStatus: 'error_managing_deleting',
      details: { cinderStatus: 'OTHER' },
    });
    const w = c.sim.seedVolume({ project: 'demo', name: 'weird', status: 'not-a-status' });
    expect(await c.backend.getVolume(ref(w), c.as.demo)).toMatchObject({
      status: 'UNKNOWN',
      details: { cinderStatus: 'OTHER' },
    });
  });

  it("should answer null for unknown, malformed and other projects' volumes", async () => {
    const theirs = c.sim.seedVolume({ project: 'other', name: 'theirs' });
    c.sim.clearRequests();
    expect(await c.backend.getVolume(ref('d0000000-0000-4000-8000-0000000000ff'), c.as.demo)).toBeNull();
    expect(await c.backend.getVolume(ref(theirs), c.as.demo)).toBeNull();
    expect(await c.backend.getVolume(ref('not-a-uuid'), c.as.demo)).toBeNull();
    // The malformed id costs no call.
    expect(calls(c.sim.requests(), 'cinder').filter((x) => x.startsWith('GET /v3/{p}/volumes/'))).toHaveLength(2);
  });

  it('should page a listing with positions that resume at each item and a next token', async () => {
    const ids = ['a', 'b', 'c'].map((name) => c.sim.seedVolume({ project: 'demo', name }));
    const first = await c.backend.listVolumes({ namespace: c.p.demo, limit: 2, token: null }, c.as.demo);
    expect(first.items.map((p) => p.item.ref.nativeId)).toEqual(ids.slice(0, 2));
    expect(first.items.map((p) => p.position)).toEqual(['^', ids[0]]);
    expect(first.next).toBe(ids[1]);
    const second = await c.backend.listVolumes({ namespace: '*', limit: 2, token: first.next }, c.as.demo);
    expect(second.items.map((p) => p.item.ref.nativeId)).toEqual([ids[2]]);
    expect(second.next).toBeNull();
    const named = await c.backend.listVolumes({ namespace: '*', limit: 10, token: null, name: 'b' }, c.as.demo);
    expect(named.items.map((p) => p.item.name)).toEqual(['b']);
    expect(await c.backend.listVolumes({ namespace: c.p.other, limit: 10, token: null }, c.as.demo)).toEqual({
      items: [],
      next: null,
    });
    await expect(c.backend.listVolumes({ namespace: '*', limit: 10, token: 'bogus' }, c.as.demo)).rejects.toMatchObject(
      { code: 'BAD_USER_INPUT' },
    );
  });

  it('should read a small batch with one show each and a large one with one list plus shows for what it lacks', async () => {
    const ids = Array.from({ length: LIST_STRATEGY_THRESHOLD.volumes + 1 }, (_, i) =>
      c.sim.seedVolume({ project: 'demo', name: `v${i}` }),
    );
    const theirs = c.sim.seedVolume({ project: 'other', name: 'theirs' });
    await c.backend.getVolume(ref(ids[0]!), c.as.demo); // session and version document out of the way
    c.sim.clearRequests();
    const small = await c.backend.getVolumes(
      ids.slice(0, 3).map((id) => ref(id)),
      c.as.demo,
      4,
    );
    expect(small.map((v) => (v as { ref: VolumeRef }).ref.nativeId)).toEqual(ids.slice(0, 3));
    expect(calls(c.sim.requests(), 'cinder').sort()).toEqual(
      ids
        .slice(0, 3)
        .map((id) => `GET /v3/{p}/volumes/${id}`)
        .sort(),
    );

    c.sim.clearRequests();
    const unknown = 'd0000000-0000-4000-8000-0000000000ee';
    const refs = [...ids.map((id) => ref(id)), ref(unknown), ref(theirs, c.p.other)];
    const large = await c.backend.getVolumes(refs, c.as.demo, 4);
    expect(large.slice(0, ids.length).map((v) => (v as { name: string }).name)).toEqual(ids.map((_, i) => `v${i}`));
    expect(large.slice(ids.length)).toEqual([null, null]);
    // One page of the project, one show for the id the page lacks, none for the other project.
    expect(calls(c.sim.requests(), 'cinder')).toEqual(['GET /v3/{p}/volumes/detail', `GET /v3/{p}/volumes/${unknown}`]);
  });
});

describe('OpenStack adapter: volume changes driven to their end', () => {
  it('should create a volume in whole GiB and succeed once Cinder says available', async () => {
    c.sim.setDelays({ createMs: 200 }); // long enough for the first check to see it under way
    const a = await c.backend.createVolume(
      { namespace: 'default', name: 'new', capacityMinBytes: GIB + 1, own: { availabilityZone: 'nova' } },
      c.as.demo,
    );
    expect(a.result).toEqual({
      backend: 'os',
      namespace: c.p.demo,
      nativeId: expect.stringMatching(/^[0-9a-f-]{36}$/),
    });
    expect(a.pending!.rule).toMatchObject({
      name: 'volumeCreate',
      params: { volumeId: a.result.nativeId, cinderRequestId: expect.stringMatching(/^req-/) },
      seen: {},
    });
    expect(c.sim.volume(a.result.nativeId)).toMatchObject({ size: 2, status: 'creating' });
    const d = await drive(c.backend, a.pending, c.as.demo);
    expect(d.checks[0]!.progress).toEqual({ state: 'RUNNING', backendStatus: 'creating' });
    expect(d.last).toEqual({ state: 'SUCCEEDED', backendStatus: 'available' });
  });

  it('should fail a create that Cinder ends in error, with its user message as the reason', async () => {
    c.sim.failNextCreate('doomed');
    const a = await c.backend.createVolume({ namespace: c.p.demo, name: 'doomed', capacityMinBytes: GIB }, c.as.demo);
    const d = await drive(c.backend, a.pending, c.as.demo);
    expect(d.last).toEqual({
      state: 'FAILED',
      backendStatus: 'error',
      reason: 'Cinder set the volume to error: schedule allocate volume:Could not find any available weighted backend.',
    });
  });

  it('should refuse impossible creates before any call', async () => {
    c.sim.clearRequests();
    await expect(
      c.backend.createVolume({ namespace: c.p.other, name: 'x', capacityMinBytes: GIB }, c.as.demo),
    ).rejects.toMatchObject({ code: 'BAD_USER_INPUT', field: 'namespace' });
    await expect(c.backend.createVolume({ namespace: 'default', name: 'x' }, c.as.demo)).rejects.toMatchObject({
      code: 'BAD_USER_INPUT',
    });
    await expect(
      c.backend.createVolume(
        { namespace: 'default', name: 'x', capacityMinBytes: GIB + 1, capacityMaxBytes: GIB + 2 },
        c.as.demo,
      ),
    ).rejects.toMatchObject({ code: 'BAD_USER_INPUT' });
    await expect(
      c.backend.createVolume({ namespace: 'default', name: 'x', own: { snapshotId: 'nope' } }, c.as.demo),
    ).rejects.toMatchObject({ code: 'BAD_USER_INPUT', field: 'cinder.snapshotId' });
    // A source must be this backend's own: another backend's snapshot id is refused, naming the field.
    const elsewhere = encodeGlobalId({
      kind: 'Snapshot',
      backend: 'east',
      scope: c.p.demo,
      nativeId: '8c0f4d36-6a51-4d35-9c0e-0b8a4f3c2a11',
    });
    await expect(
      c.backend.createVolume({ namespace: 'default', name: 'x', own: { snapshotId: elsewhere } }, c.as.demo),
    ).rejects.toMatchObject({ code: 'BAD_USER_INPUT', field: 'cinder.snapshotId' });
    await expect(
      c.backend.deleteVolume(
        ref(c.sim.seedVolume({ project: 'demo', name: 'kept' })),
        { own: { secrets: [{ key: 'k', value: 'v' }] } },
        c.as.demo,
      ),
    ).rejects.toMatchObject({ field: 'secrets' });
    expect(calls(c.sim.requests(), 'cinder')).toEqual([]);
  });

  it('should extend and succeed only when the new size shows and Cinder is no longer extending', async () => {
    const id = c.sim.seedVolume({ project: 'demo', name: 'grow', size: 1 });
    c.sim.setDelays({ extendMs: 200 }); // long enough for a check to see it under way
    const a = await c.backend.extendVolume(ref(id), 3 * GIB, c.as.demo);
    expect(a.pending!.rule).toMatchObject({ name: 'volumeExtend', params: { volumeId: id, sizeGiB: 3 } });
    const d = await drive(c.backend, a.pending, c.as.demo);
    expect(d.checks.some((x) => x.progress.backendStatus === 'extending')).toBe(true);
    expect(d.last).toEqual({ state: 'SUCCEEDED', backendStatus: 'available' });
    expect(c.sim.volume(id)!.size).toBe(3);
  });

  it('should fail an extend that ends in error_extending with the message Cinder wrote for that request', async () => {
    const id = c.sim.seedVolume({ project: 'demo', name: 'stuck', size: 1 });
    c.sim.failNextExtend(id);
    const a = await c.backend.extendVolume(ref(id), 2 * GIB, c.as.demo);
    await until(() => c.sim.volume(id)!.status === 'error_extending', "c.sim.volume(id)!.status === 'error_extending'");
    // A newer message about the same volume, from another request, is not this change's reason.
    c.sim.seedUserMessage({ project: 'demo', volumeId: id, action: 'ATTACH_VOLUME', detail: 'UNKNOWN_ERROR' });
    const d = await drive(c.backend, a.pending, c.as.demo);
    expect(d.last).toEqual({
      state: 'FAILED',
      backendStatus: 'error_extending',
      reason: 'Cinder set the volume to error_extending: extend volume:Volume Driver failed to extend volume.',
    });
  });

  it('should refuse extends that do not grow by whole GiB before sending them', async () => {
    const id = c.sim.seedVolume({ project: 'demo', name: 'fixed', size: 2 });
    await expect(c.backend.extendVolume(ref(id), 2.5 * GIB, c.as.demo)).rejects.toMatchObject({
      code: 'BAD_USER_INPUT',
    });
    await expect(c.backend.extendVolume(ref(id), 2 * GIB, c.as.demo)).rejects.toMatchObject({ code: 'BAD_USER_INPUT' });
    expect(calls(c.sim.requests(), 'cinder').filter((x) => x.includes('os-extend'))).toEqual([]);
  });

  it('should delete and succeed once Cinder answers 404', async () => {
    const id = c.sim.seedVolume({ project: 'demo', name: 'bye' });
    const a = await c.backend.deleteVolume(ref(id), {}, c.as.demo);
    expect(a.pending!.rule.name).toBe('volumeGone');
    const d = await drive(c.backend, a.pending, c.as.demo);
    expect(d.last).toEqual({ state: 'SUCCEEDED', backendStatus: 'deleted' });
    expect(c.sim.volume(id)).toBeUndefined();
  });

  it('should update name, description and metadata and answer the full view', async () => {
    const id = c.sim.seedVolume({ project: 'demo', name: 'old' });
    const v = await c.backend.updateVolume(
      ref(id),
      { name: 'new', description: 'd', metadata: [{ key: 'k', value: 'v' }] },
      c.as.demo,
    );
    expect(v).toMatchObject({ name: 'new', details: { description: 'd', metadata: [{ key: 'k', value: 'v' }] } });
    await expect(c.backend.updateVolume(ref(id), {}, c.as.demo)).rejects.toMatchObject({ code: 'BAD_USER_INPUT' });
  });
});
