/**
 * Every Cinder volume action in the seed documents, as its typed mutation, against the OpenStack
 * simulator: the right wire action is sent, the answer is mapped, and known rules are refused
 * with BAD_USER_INPUT before any backend call.
 */
import { disposeAll, startGatewayFor, startOpenStack, waitOperation, type GatewayUnderTest, type OpenStackUnderTest } from '../support/harness';

const PAYLOAD = 'volume { status backendStatus bootable metadata { key value } imageMetadata { key value } } operation { id state kind } imageMetadata { key value } connectionInfo savedVolumeId image { id name }';

describe('Cinder volume actions as typed mutations', () => {
  let os: OpenStackUnderTest;
  let gw: GatewayUnderTest;
  let member: Record<string, string>;
  let admin: Record<string, string>;
  const gid = async (nativeId: string): Promise<string> => (await gw.gql(`query($n: String!, $p: String) { volumeByNativeId(backend: "os", namespace: $p, nativeId: $n) { id } }`, { n: nativeId, p: os.demo }, member)).body.data.volumeByNativeId.id;
  /** Runs a mutation `name(input: $i)` and returns its payload, failing on errors. */
  const run = async (name: string, input: Record<string, unknown>, headers = member): Promise<any> => {
    const type = `${name[0]!.toUpperCase()}${name.slice(1)}`;
    const inputType = INPUT_TYPES[name] ?? `${type}Input`;
    const res = await gw.gql(`mutation($i: ${inputType}!) { ${name}(input: $i) { ${PAYLOAD} } }`, { i: input }, headers);
    expect({ name, errors: res.body.errors }).toEqual({ name, errors: undefined });
    return res.body.data[name];
  };
  /** The last action body sent to Cinder. */
  const lastAction = (): Record<string, unknown> => {
    const r = (os.sim.requests() as any[]).filter((x) => x.service === 'cinder' && x.method === 'POST' && x.path.endsWith('/action')).at(-1);
    return r ? { path: r.path.replace(/[0-9a-f-]{36}/, ':id').replace(/\/v3\/[0-9a-f]+/, ''), action: r.action } : {};
  };
  const INPUT_TYPES: Record<string, string> = {
    unmanageVolume: 'VolumeIdInput', forceDeleteVolume: 'VolumeIdInput', reserveVolume: 'VolumeIdInput', unreserveVolume: 'VolumeIdInput',
    beginDetachingVolume: 'VolumeIdInput', rollDetachingVolume: 'VolumeIdInput', revertVolumeToSnapshot: 'RevertVolumeInput',
    legacyAttachVolume: 'LegacyAttachVolumeInput', legacyDetachVolume: 'LegacyDetachVolumeInput', terminateVolumeConnection: 'VolumeConnectorInput',
    setVolumeReadonly: 'SetVolumeReadonlyInput', completeVolumeExtend: 'CompleteVolumeExtendInput', completeVolumeMigration: 'CompleteVolumeMigrationInput',
  };

  beforeAll(async () => {
    os = await startOpenStack({ delays: { attachMs: 30, detachMs: 30, extendMs: 30, createMs: 30, deleteMs: 30, snapshotMs: 30, revertMs: 30 } });
    gw = await startGatewayFor([os.backend('os')], { operationOptions: { pollMs: 20, maxPollMs: 50 } });
    member = { 'x-auth-token': os.demoToken };
    admin = { 'x-auth-token': os.adminToken };
  });
  afterAll(disposeAll);

  it('should set bootable, the read-only flag and image metadata, and show and unset it', async () => {
    const id = await gid(os.sim.seedVolume({ project: os.demo, name: 'img', size: 1 }));
    expect((await run('setVolumeBootable', { id, bootable: true })).volume.bootable).toBe(true);
    expect(lastAction()).toMatchObject({ action: 'os-set_bootable' });
    await run('setVolumeReadonly', { id, readonly: true });
    expect(lastAction()).toMatchObject({ action: 'os-update_readonly_flag' });
    await run('setVolumeReadonly', { id, readonly: false });
    const set = await run('setVolumeImageMetadata', { id, metadata: [{ key: 'os_distro', value: 'debian' }, { key: 'hw_disk_bus', value: 'virtio' }] });
    expect(set.imageMetadata).toEqual(expect.arrayContaining([{ key: 'os_distro', value: 'debian' }]));
    const shown = await gw.gql(`query($id: ID!) { volumeImageMetadata(id: $id) { key value } }`, { id }, member);
    expect(shown.body.data.volumeImageMetadata).toEqual(expect.arrayContaining([{ key: 'hw_disk_bus', value: 'virtio' }]));
    expect(lastAction()).toMatchObject({ action: 'os-show_image_metadata' });
    await run('unsetVolumeImageMetadata', { id, key: 'os_distro' });
    expect(lastAction()).toMatchObject({ action: 'os-unset_image_metadata' });
    const missing = await gw.gql(`mutation($i: UnsetVolumeImageMetadataInput!) { unsetVolumeImageMetadata(input: $i) { volume { id } } }`, { i: { id, key: 'nope' } }, member);
    expect(missing.body.errors[0].extensions).toMatchObject({ code: 'NOT_FOUND', backend: 'os', httpStatus: 404 });
  });

  it('should update name, description and metadata (PUT), reading the volume back', async () => {
    const id = await gid(os.sim.seedVolume({ project: os.demo, name: 'before', size: 1 }));
    const res = await gw.gql(
      `mutation($i: UpdateVolumeInput!) { updateVolume(input: $i) { volume { name description metadata { key value } } } }`,
      { i: { id, name: 'after', description: 'renamed', metadata: [{ key: 'team', value: 'db' }] } },
      member,
    );
    expect(res.body).toEqual({ data: { updateVolume: { volume: { name: 'after', description: 'renamed', metadata: [{ key: 'team', value: 'db' }] } } } });
    expect(os.sim.requests().some((r: any) => r.service === 'cinder' && r.method === 'PUT' && /\/volumes\/[0-9a-f-]{36}$/.test(r.path))).toBe(true);
  });

  it('should delete a volume with its snapshots only when asked to cascade', async () => {
    const native = os.sim.seedVolume({ project: os.demo, name: 'with-snaps', size: 1 });
    os.sim.seedSnapshot({ volumeId: native, name: 'snap-of-it' });
    const id = await gid(native);
    const del = (cascade: boolean) => gw.gql(`mutation($i: DeleteVolumeInput!) { deleteVolume(input: $i) { operation { id } } }`, { i: { id, cascade } }, member);
    const refused = await del(false);
    // Cinder says 400 "Invalid volume: … must not … have snapshots": the volume's state, so CONFLICT.
    expect(refused.body.errors[0].extensions).toMatchObject({ code: 'CONFLICT', backend: 'os', httpStatus: 400 });
    const done = await del(true);
    expect(done.body.errors).toBeUndefined();
    expect(os.sim.requests().some((r: any) => r.method === 'DELETE' && r.path.endsWith(native) && r.params.cascade?.[0] === 'true')).toBe(true);
    expect(await waitOperation(gw, done.body.data.deleteVolume.operation.id, member)).toMatchObject({ state: 'SUCCEEDED' });
    expect(os.sim.volume(native)).toBeUndefined();
  });

  it('should reserve and unreserve, begin and roll back detaching, like the legacy Nova flow', async () => {
    const server = os.sim.seedServer({ project: os.demo, name: 'legacy' });
    const id = await gid(os.sim.seedVolume({ project: os.demo, name: 'legacy', size: 1 }));
    expect((await run('reserveVolume', { id })).volume.backendStatus).toBe('attaching');
    expect((await run('unreserveVolume', { id })).volume.backendStatus).toBe('available');
    await run('reserveVolume', { id });
    const init = await run('initializeVolumeConnection', { id, connector: { host: 'cmp-1', initiator: 'iqn.cmp1' } });
    expect(init.connectionInfo).toEqual(expect.objectContaining({ driver_volume_type: expect.any(String) }));
    expect((await run('legacyAttachVolume', { id, serverId: server, mountpoint: '/dev/vdc' })).volume.backendStatus).toBe('in-use');
    expect((await run('beginDetachingVolume', { id })).volume.backendStatus).toBe('detaching');
    expect((await run('rollDetachingVolume', { id })).volume.backendStatus).toBe('in-use');
    await run('beginDetachingVolume', { id });
    await run('terminateVolumeConnection', { id, connector: { host: 'cmp-1', initiator: 'iqn.cmp1' } });
    expect((await run('legacyDetachVolume', { id })).volume.backendStatus).toBe('available');
  });

  it('should retype, upload to an image and unmanage, tracking each to the end', async () => {
    const id = await gid(os.sim.seedVolume({ project: os.demo, name: 'busy', size: 1 }));
    const retype = await run('retypeVolume', { id, newType: 'multiattach', migrationPolicy: 'ON_DEMAND' });
    expect(lastAction()).toMatchObject({ action: 'os-retype' });
    expect(await waitOperation(gw, retype.operation.id, member)).toMatchObject({ kind: 'RETYPE_VOLUME', state: 'SUCCEEDED' });
    const upload = await run('uploadVolumeToImage', { id, imageName: 'golden', diskFormat: 'raw', containerFormat: 'bare' });
    expect(upload.image).toMatchObject({ name: 'golden' });
    expect(await waitOperation(gw, upload.operation.id, member)).toMatchObject({ kind: 'UPLOAD_VOLUME_IMAGE', state: 'SUCCEEDED' });
    const unmanage = await run('unmanageVolume', { id }, admin);
    expect(await waitOperation(gw, unmanage.operation.id, admin)).toMatchObject({ kind: 'UNMANAGE_VOLUME', state: 'SUCCEEDED' });
  });

  it('should do the admin actions with an admin token and answer FORBIDDEN to a member', async () => {
    const id = await gid(os.sim.seedVolume({ project: os.demo, name: 'adm', size: 1 }));
    const denied = await gw.gql(`mutation($i: ResetVolumeStatusInput!) { resetVolumeStatus(input: $i) { volume { id } } }`, { i: { id, status: 'error' } }, member);
    expect(denied.body.errors[0].extensions).toMatchObject({ code: 'FORBIDDEN', backend: 'os', httpStatus: 403 });
    expect(denied.body.errors[0].extensions.backendMessage).toMatch(/reset_status/);
    expect((await run('resetVolumeStatus', { id, status: 'error' }, admin)).volume.status).toBe('ERROR');
    expect((await run('resetVolumeStatus', { id, status: 'available' }, admin)).volume.status).toBe('AVAILABLE');
    await run('forceDetachVolume', { id }, admin);
    expect(lastAction()).toMatchObject({ action: 'os-force_detach' });
    const migrate = await run('migrateVolume', { id, host: 'openstack-sim@fake2#fake2' }, admin);
    expect(lastAction()).toMatchObject({ action: 'os-migrate_volume' });
    await waitOperation(gw, migrate.operation.id, admin);
    const fd = await run('forceDeleteVolume', { id }, admin);
    expect(await waitOperation(gw, fd.operation.id, admin)).toMatchObject({ state: 'SUCCEEDED' });
  });

  it('should send the completion and reimage actions and map Cinder refusals to typed errors with its message', async () => {
    const id = await gid(os.sim.seedVolume({ project: os.demo, name: 'rules', size: 1 }));
    // This cloud is Cinder 3.70: the extend completion (3.71) is refused before any call
    // (openstack-compat.test.ts sends it to a 3.71 cloud).
    os.sim.clearRequests();
    const early = await gw.gql(`mutation($i: CompleteVolumeExtendInput!) { completeVolumeExtend(input: $i) { volume { id } } }`, { i: { id, error: false } }, admin);
    expect(early.body.errors[0].extensions).toMatchObject({ code: 'UNSUPPORTED_BY_BACKEND', backend: 'os' });
    expect(os.sim.requests().filter((r) => r.action === 'os-extend_volume_completion')).toEqual([]);
    for (const [name, input, action] of [
      ['completeVolumeMigration', { id, newVolumeId: '00000000-0000-4000-8000-000000000001', error: false }, 'os-migrate_volume_completion'],
      ['reimageVolume', { id, imageId: '00000000-0000-4000-8000-000000000002' }, 'os-reimage'],
    ] as const) {
      const type = INPUT_TYPES[name] ?? `${name[0]!.toUpperCase()}${name.slice(1)}Input`;
      const res = await gw.gql(`mutation($i: ${type}!) { ${name}(input: $i) { volume { id } } }`, { i: input }, admin);
      expect(lastAction()).toMatchObject({ action });
      // The simulator refuses or accepts as Cinder would; either way the answer is typed.
      if (res.body.errors) expect(res.body.errors[0].extensions).toMatchObject({ backend: 'os', backendMessage: expect.any(String) });
    }
  });

  it('should refuse known-bad input before any backend call', async () => {
    const id = await gid(os.sim.seedVolume({ project: os.demo, name: 'bad', size: 2 }));
    os.sim.clearRequests();
    const cases: Array<[string, Record<string, unknown>, RegExp]> = [
      ['resetVolumeStatus', { id, status: 'sparkling' }, /not a Cinder volume status/],
      ['resetVolumeStatus', { id, status: 'deleting' }, /not a Cinder volume status/],
      ['resetVolumeStatus', { id, attachStatus: 'attaching' }, /attached" or "detached/],
      ['resetVolumeStatus', { id }, /at least one/],
      ['legacyAttachVolume', { id, mountpoint: '/dev/vdb', serverId: 'not-a-uuid' }, /UUID/],
      ['legacyDetachVolume', { id, attachmentId: '../../etc' }, /./],
      ['setVolumeImageMetadata', { id, metadata: [] }, /empty/],
    ];
    for (const [name, input, message] of cases) {
      const type = INPUT_TYPES[name] ?? `${name[0]!.toUpperCase()}${name.slice(1)}Input`;
      const res = await gw.gql(`mutation($i: ${type}!) { ${name}(input: $i) { volume { id } } }`, { i: input }, member);
      expect({ name, code: res.body.errors?.[0]?.extensions?.code }).toEqual({ name, code: 'BAD_USER_INPUT' });
      expect(res.body.errors[0].message).toMatch(message);
    }
    for (const input of [{ id, newSizeGiB: -1 }, { id, newSizeGiB: 0 }, { id, newSizeBytes: 1000 }, { id }, { id: 'bm90LWFuLWlk', newSizeGiB: 3 }]) {
      const res = await gw.gql(`mutation($i: ExtendVolumeInput!) { extendVolume(input: $i) { volume { id } } }`, { i: input }, member);
      expect(res.body.errors[0].extensions.code).toBe('BAD_USER_INPUT');
    }
    const notUuid = await gw.gql(`query { volumeByNativeId(backend: "os", nativeId: "not-a-uuid") { id } }`, {}, member);
    expect(notUuid.body.data.volumeByNativeId).toBeNull();
    const attach = await gw.gql(`mutation($i: AttachVolumeInput!) { attachVolume(input: $i) { operation { id } } }`, { i: { volumeId: id, serverId: '1234', tag: 'a/b' } }, member);
    expect(attach.body.errors[0].extensions.code).toBe('BAD_USER_INPUT');
    // Only the Keystone validation and read-only calls may have happened: no write reached Cinder or Nova.
    expect((os.sim.requests() as any[]).filter((r) => r.method !== 'GET' && r.service !== 'keystone')).toEqual([]);
  });

  it('should answer UNSUPPORTED_BY_BACKEND for a Cinder action on Nomad-like backends and CONFLICT/BAD_USER_INPUT from Cinder rules', async () => {
    const server = os.sim.seedServer({ project: os.demo, name: 'rules' });
    const vid = os.sim.seedVolume({ project: os.demo, name: 'in-use', size: 1 });
    os.sim.attachNow(server, vid, {});
    const id = await gid(vid);
    const del = await gw.gql(`mutation($i: DeleteVolumeInput!) { deleteVolume(input: $i) { deletedId } }`, { i: { id } }, member);
    expect(del.body.errors[0].extensions).toMatchObject({ code: 'CONFLICT', backend: 'os', httpStatus: 400 });
    expect(del.body.errors[0].extensions.backendMessage).toMatch(/^Invalid volume: Volume status must be available/);
    const detachNovaOwned = await gw.gql(`mutation($i: LegacyDetachVolumeInput!) { legacyDetachVolume(input: $i) { volume { id } } }`, { i: { id } }, member);
    expect(detachNovaOwned.body.errors[0].extensions).toMatchObject({ code: 'CONFLICT', httpStatus: 409 });
  });

  it('should update the Nova attachment: swap is refused by Nova unless Cinder migrates, deleteOnTermination changes in place', async () => {
    const server = os.sim.seedServer({ project: os.demo, name: 'upd' });
    const vid = os.sim.seedVolume({ project: os.demo, name: 'upd', size: 1 });
    os.sim.attachNow(server, vid, {});
    const id = await gid(vid);
    const dot = await gw.gql(`mutation($i: UpdateServerVolumeAttachmentInput!) { updateServerVolumeAttachment(input: $i) { operation { state kind } } }`, { i: { volumeId: id, serverId: server, deleteOnTermination: true } }, member);
    expect(dot.body.errors).toBeUndefined();
    expect(dot.body.data.updateServerVolumeAttachment.operation).toMatchObject({ state: 'SUCCEEDED', kind: 'UPDATE_ATTACHMENT' });
    const list = await gw.gql(`query($s: ID!) { server(backend: "os", id: $s) { volumeAttachments { volumeId deleteOnTermination } } }`, { s: server }, member);
    expect(list.body.data.server.volumeAttachments).toEqual([{ volumeId: vid, deleteOnTermination: true }]);
    const other = await gid(os.sim.seedVolume({ project: os.demo, name: 'swap-target', size: 1 }));
    const swap = await gw.gql(`mutation($i: UpdateServerVolumeAttachmentInput!) { updateServerVolumeAttachment(input: $i) { operation { state } } }`, { i: { volumeId: id, serverId: server, newVolumeId: other } }, member);
    expect(swap.body.errors[0].extensions).toMatchObject({ backend: 'os' });
  });
});
