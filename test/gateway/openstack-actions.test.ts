/**
 * Every Cinder volume action in the seed documents, as its typed mutation, against the OpenStack
 * simulator: the right wire action is sent, the answer is mapped, and known rules are refused
 * with BAD_USER_INPUT before any backend call.
 */
import {
  disposeAll,
  startGatewayFor,
  startOpenStack,
  type GatewayUnderTest,
  type OpenStackUnderTest,
  waitOperation,
} from '../support/harness';

const VOLUME =
  'volume { status backendStatus details { ... on CinderVolumeDetails { bootable metadata { key value } imageMetadata { key value } } } }';
const ACTION = `${VOLUME} operation { id state kind }`;
/** Each payload type's fields; CinderVolumeActionPayload for the rest. */
const PAYLOADS: Record<string, string> = {
  setCinderVolumeImageMetadata: `${VOLUME} imageMetadata { key value }`,
  unsetCinderVolumeImageMetadata: `${VOLUME} imageMetadata { key value }`,
  completeCinderVolumeMigration: `${VOLUME} savedVolumeId`,
  uploadCinderVolumeToImage: `${ACTION} image { id name }`,
  initializeCinderVolumeConnection: `${VOLUME} connectionInfo`,
};
/** Input types that are not `<Mutation>Input`. */
const INPUT_TYPES: Record<string, string> = {
  unmanageCinderVolume: 'CinderVolumeInput',
  forceDeleteCinderVolume: 'CinderVolumeInput',
  reserveCinderVolume: 'CinderVolumeInput',
  unreserveCinderVolume: 'CinderVolumeInput',
  beginDetachingCinderVolume: 'CinderVolumeInput',
  rollDetachingCinderVolume: 'CinderVolumeInput',
  revertCinderVolumeToSnapshot: 'RevertCinderVolumeToSnapshotInput',
};
const inputType = (name: string): string => INPUT_TYPES[name] ?? `${name[0]!.toUpperCase()}${name.slice(1)}Input`;
const mutation = (name: string, fields = PAYLOADS[name] ?? ACTION): string =>
  `mutation($i: ${inputType(name)}!) { ${name}(input: $i) { ${fields} } }`;

describe('Cinder volume actions as typed mutations', () => {
  let os: OpenStackUnderTest;
  let gw: GatewayUnderTest;
  let member: Record<string, string>;
  let admin: Record<string, string>;
  const gid = async (nativeId: string): Promise<string> =>
    (
      await gw.gql(
        `query($n: String!, $p: String) { volumeByNativeId(backend: "os", namespace: $p, nativeId: $n) { id } }`,
        { n: nativeId, p: os.demo },
        member,
      )
    ).body.data.volumeByNativeId.id;
  /** Runs a mutation `name(input: $i)` and returns its payload, failing on errors. */
  const run = async (name: string, input: Record<string, unknown>, headers = member): Promise<any> => {
    const res = await gw.gql(mutation(name), { i: input }, headers);
    expect({ name, errors: res.body.errors }).toEqual({ name, errors: undefined });
    return res.body.data[name];
  };
  /** The last action body sent to Cinder. */
  const lastAction = (): Record<string, unknown> => {
    const r = (os.sim.requests() as any[])
      .filter((x) => x.service === 'cinder' && x.method === 'POST' && x.path.endsWith('/action'))
      .at(-1);
    return r ? { path: r.path.replace(/[0-9a-f-]{36}/, ':id').replace(/\/v3\/[0-9a-f]+/, ''), action: r.action } : {};
  };

  beforeAll(async () => {
    os = await startOpenStack({
      delays: { attachMs: 30, detachMs: 30, extendMs: 30, createMs: 30, deleteMs: 30, snapshotMs: 30, revertMs: 30 },
    });
    gw = await startGatewayFor([os.backend('os')], { operationOptions: { pollMs: 20, maxPollMs: 50 } });
    member = { 'x-auth-token': os.demoToken };
    admin = { 'x-auth-token': os.adminToken };
  });
  afterAll(disposeAll);

  it('should set bootable, the read-only flag and image metadata, and show and unset it', async () => {
    const id = await gid(os.sim.seedVolume({ project: os.demo, name: 'img', size: 1 }));
    const bootable = await run('setCinderVolumeBootable', { volumeId: id, bootable: true });
    expect(bootable.volume.details.bootable).toBe(true);
    // A synchronous action is a VOLUME_ACTION operation, SUCCEEDED at once.
    expect(bootable.operation).toMatchObject({ kind: 'VOLUME_ACTION', state: 'SUCCEEDED' });
    expect(lastAction()).toMatchObject({ action: 'os-set_bootable' });
    await run('setCinderVolumeReadonly', { volumeId: id, readonly: true });
    expect(lastAction()).toMatchObject({ action: 'os-update_readonly_flag' });
    await run('setCinderVolumeReadonly', { volumeId: id, readonly: false });
    const set = await run('setCinderVolumeImageMetadata', {
      volumeId: id,
      metadata: [
        { key: 'os_distro', value: 'debian' },
        { key: 'hw_disk_bus', value: 'virtio' },
      ],
    });
    expect(set.imageMetadata).toEqual(expect.arrayContaining([{ key: 'os_distro', value: 'debian' }]));
    const shown = await gw.gql(`query($id: ID!) { cinderVolumeImageMetadata(id: $id) { key value } }`, { id }, member);
    expect(shown.body.data.cinderVolumeImageMetadata).toEqual(
      expect.arrayContaining([{ key: 'hw_disk_bus', value: 'virtio' }]),
    );
    expect(lastAction()).toMatchObject({ action: 'os-show_image_metadata' });
    const unset = await run('unsetCinderVolumeImageMetadata', { volumeId: id, key: 'os_distro' });
    // The unset, then the read of what is left.
    expect(
      (os.sim.requests() as any[])
        .filter((r) => r.action)
        .slice(-2)
        .map((r) => r.action),
    ).toEqual(['os-unset_image_metadata', 'os-show_image_metadata']);
    expect(unset.imageMetadata).not.toContainEqual({ key: 'os_distro', value: 'debian' });
    const missing = await gw.gql(
      mutation('unsetCinderVolumeImageMetadata', 'volume { status }'),
      { i: { volumeId: id, key: 'nope' } },
      member,
    );
    expect(missing.body.errors[0].extensions).toMatchObject({ code: 'NOT_FOUND', backend: 'os', httpStatus: 404 });
  });

  it('should update name, description and metadata (PUT), reading the volume back', async () => {
    const id = await gid(os.sim.seedVolume({ project: os.demo, name: 'before', size: 1 }));
    const res = await gw.gql(
      `mutation($i: UpdateVolumeInput!) { updateVolume(input: $i) { volume { name details { ... on CinderVolumeDetails { description metadata { key value } } } } operation { kind state } } }`,
      { i: { volumeId: id, name: 'after', description: 'renamed', metadata: [{ key: 'team', value: 'db' }] } },
      member,
    );
    expect(res.body).toEqual({
      data: {
        updateVolume: {
          volume: { name: 'after', details: { description: 'renamed', metadata: [{ key: 'team', value: 'db' }] } },
          operation: { kind: 'UPDATE_VOLUME', state: 'SUCCEEDED' },
        },
      },
    });
    expect(
      os.sim
        .requests()
        .some((r: any) => r.service === 'cinder' && r.method === 'PUT' && /\/volumes\/[0-9a-f-]{36}$/.test(r.path)),
    ).toBe(true);
  });

  it('should delete a volume with its snapshots only when asked to cascade', async () => {
    const native = os.sim.seedVolume({ project: os.demo, name: 'with-snaps', size: 1 });
    os.sim.seedSnapshot({ volumeId: native, name: 'snap-of-it' });
    const id = await gid(native);
    const del = (cascade: boolean) =>
      gw.gql(
        `mutation($i: DeleteVolumeInput!) { deleteVolume(input: $i) { operation { id } } }`,
        { i: { volumeId: id, cascade } },
        member,
      );
    const refused = await del(false);
    // Cinder says 400 "Invalid volume: … must not … have snapshots": the volume's state, so CONFLICT.
    expect(refused.body.errors[0].extensions).toMatchObject({ code: 'CONFLICT', backend: 'os', httpStatus: 400 });
    const done = await del(true);
    expect(done.body.errors).toBeUndefined();
    expect(
      os.sim
        .requests()
        .some((r: any) => r.method === 'DELETE' && r.path.endsWith(native) && r.params.cascade?.[0] === 'true'),
    ).toBe(true);
    expect(await waitOperation(gw, done.body.data.deleteVolume.operation.id, member)).toMatchObject({
      state: 'SUCCEEDED',
    });
    expect(os.sim.volume(native)).toBeUndefined();
  });

  it('should reserve and unreserve, begin and roll back detaching, like the legacy Nova flow', async () => {
    const server = os.sim.seedServer({ project: os.demo, name: 'legacy' });
    const id = await gid(os.sim.seedVolume({ project: os.demo, name: 'legacy', size: 1 }));
    expect((await run('reserveCinderVolume', { volumeId: id })).volume.backendStatus).toBe('attaching');
    expect((await run('unreserveCinderVolume', { volumeId: id })).volume.backendStatus).toBe('available');
    await run('reserveCinderVolume', { volumeId: id });
    const init = await run('initializeCinderVolumeConnection', {
      volumeId: id,
      connector: { host: 'cmp-1', initiator: 'iqn.cmp1' },
    });
    expect(init.connectionInfo).toEqual(expect.objectContaining({ driver_volume_type: expect.any(String) }));
    expect(
      (await run('attachCinderVolumeLegacy', { volumeId: id, serverId: server, mountpoint: '/dev/vdc' })).volume
        .backendStatus,
    ).toBe('in-use');
    expect((await run('beginDetachingCinderVolume', { volumeId: id })).volume.backendStatus).toBe('detaching');
    expect((await run('rollDetachingCinderVolume', { volumeId: id })).volume.backendStatus).toBe('in-use');
    await run('beginDetachingCinderVolume', { volumeId: id });
    await run('terminateCinderVolumeConnection', { volumeId: id, connector: { host: 'cmp-1', initiator: 'iqn.cmp1' } });
    expect((await run('detachCinderVolumeLegacy', { volumeId: id })).volume.backendStatus).toBe('available');
  });

  it('should retype, upload to an image and unmanage, tracking each to the end', async () => {
    const id = await gid(os.sim.seedVolume({ project: os.demo, name: 'busy', size: 1 }));
    const retype = await run('retypeCinderVolume', {
      volumeId: id,
      newType: 'multiattach',
      migrationPolicy: 'ON_DEMAND',
    });
    expect(lastAction()).toMatchObject({ action: 'os-retype' });
    expect(await waitOperation(gw, retype.operation.id, member)).toMatchObject({
      kind: 'RETYPE_VOLUME',
      state: 'SUCCEEDED',
    });
    const upload = await run('uploadCinderVolumeToImage', {
      volumeId: id,
      imageName: 'golden',
      diskFormat: 'raw',
      containerFormat: 'bare',
    });
    expect(upload.image).toMatchObject({ name: 'golden' });
    expect(await waitOperation(gw, upload.operation.id, member)).toMatchObject({
      kind: 'UPLOAD_VOLUME_IMAGE',
      state: 'SUCCEEDED',
    });
    const unmanage = await run('unmanageCinderVolume', { volumeId: id }, admin);
    expect(await waitOperation(gw, unmanage.operation.id, admin)).toMatchObject({
      kind: 'UNMANAGE_VOLUME',
      state: 'SUCCEEDED',
    });
  });

  it('should do the admin actions with an admin token and answer FORBIDDEN to a member', async () => {
    const id = await gid(os.sim.seedVolume({ project: os.demo, name: 'adm', size: 1 }));
    const denied = await gw.gql(
      mutation('resetCinderVolumeStatus', 'volume { status }'),
      { i: { volumeId: id, status: 'ERROR' } },
      member,
    );
    expect(denied.body.errors[0].extensions).toMatchObject({ code: 'FORBIDDEN', backend: 'os', httpStatus: 403 });
    expect(denied.body.errors[0].extensions.backendMessage).toMatch(/reset_status/);
    expect((await run('resetCinderVolumeStatus', { volumeId: id, status: 'ERROR' }, admin)).volume.status).toBe(
      'ERROR',
    );
    expect(lastAction()).toMatchObject({ action: 'os-reset_status' });
    expect((await run('resetCinderVolumeStatus', { volumeId: id, status: 'AVAILABLE' }, admin)).volume.status).toBe(
      'AVAILABLE',
    );
    await run('forceDetachCinderVolume', { volumeId: id }, admin);
    expect(lastAction()).toMatchObject({ action: 'os-force_detach' });
    const migrate = await run('migrateCinderVolume', { volumeId: id, host: 'openstack-sim@fake2#fake2' }, admin);
    expect(lastAction()).toMatchObject({ action: 'os-migrate_volume' });
    await waitOperation(gw, migrate.operation.id, admin);
    const fd = await run('forceDeleteCinderVolume', { volumeId: id }, admin);
    expect(await waitOperation(gw, fd.operation.id, admin)).toMatchObject({ state: 'SUCCEEDED' });
  });

  it('should send the completion and reimage actions and map Cinder refusals to typed errors with its message', async () => {
    const id = await gid(os.sim.seedVolume({ project: os.demo, name: 'rules', size: 1 }));
    // This cloud is Cinder 3.70: the extend completion (3.71) is refused before any call
    // (openstack-compat-versions.test.ts sends it to a 3.71 cloud).
    os.sim.clearRequests();
    const early = await gw.gql(
      mutation('completeCinderVolumeExtend', 'volume { status }'),
      { i: { volumeId: id, error: false } },
      admin,
    );
    expect(early.body.errors[0].extensions).toMatchObject({ code: 'UNSUPPORTED_BY_BACKEND', backend: 'os' });
    expect(os.sim.requests().filter((r) => r.action === 'os-extend_volume_completion')).toEqual([]);
    for (const [name, input, action] of [
      [
        'completeCinderVolumeMigration',
        { volumeId: id, newVolumeId: '00000000-0000-4000-8000-000000000001', error: false },
        'os-migrate_volume_completion',
      ],
      ['reimageCinderVolume', { volumeId: id, imageId: '00000000-0000-4000-8000-000000000002' }, 'os-reimage'],
    ] as const) {
      const res = await gw.gql(mutation(name, 'volume { status }'), { i: input }, admin);
      expect(lastAction()).toMatchObject({ action });
      // The simulator refuses or accepts as Cinder would; either way the answer is typed.
      if (res.body.errors)
        expect(res.body.errors[0].extensions).toMatchObject({ backend: 'os', backendMessage: expect.any(String) });
    }
  });

  it('should refuse known-bad input before any backend call', async () => {
    const id = await gid(os.sim.seedVolume({ project: os.demo, name: 'bad', size: 2 }));
    os.sim.clearRequests();
    const cases: Array<[string, Record<string, unknown>, RegExp]> = [
      // Statuses are an enum now: an unknown word fails variable coercion, before any resolver.
      [
        'resetCinderVolumeStatus',
        { volumeId: id, status: 'sparkling' },
        /"sparkling" does not exist in "CinderVolumeStatus"/,
      ],
      ['resetCinderVolumeStatus', { volumeId: id, status: 'DELETING' }, /DELETING cannot be set by a reset/],
      ['resetCinderVolumeStatus', { volumeId: id, status: 'OTHER' }, /OTHER cannot be set by a reset/],
      [
        'resetCinderVolumeStatus',
        { volumeId: id, attachStatus: 'ATTACHING' },
        /"ATTACHING" does not exist in "CinderVolumeAttachStatus"/,
      ],
      ['resetCinderVolumeStatus', { volumeId: id }, /at least one/],
      ['attachCinderVolumeLegacy', { volumeId: id, mountpoint: '/dev/vdb', serverId: 'not-a-uuid' }, /UUID/],
      ['attachCinderVolumeLegacy', { volumeId: id, mountpoint: '/dev/vdb' }, /exactly one|serverId|hostName/],
      ['detachCinderVolumeLegacy', { volumeId: id, attachmentId: '../../etc' }, /./],
      ['setCinderVolumeImageMetadata', { volumeId: id, metadata: [] }, /empty/],
    ];
    for (const [name, input, message] of cases) {
      const res = await gw.gql(mutation(name, 'volume { status }'), { i: input }, member);
      expect({ name, input, code: res.body.errors?.[0]?.extensions?.code }).toEqual({
        name,
        input,
        code: 'BAD_USER_INPUT',
      });
      expect(res.body.errors[0].message).toMatch(message);
    }
    for (const input of [
      { volumeId: id, newSizeGiB: -1 },
      { volumeId: id, newSizeGiB: 0 },
      { volumeId: id, newSizeBytes: 1000 },
      { volumeId: id },
      { volumeId: 'bm90LWFuLWlk', newSizeGiB: 3 },
    ]) {
      const res = await gw.gql(
        `mutation($i: ExtendVolumeInput!) { extendVolume(input: $i) { volume { id } } }`,
        { i: input },
        member,
      );
      expect(res.body.errors[0].extensions.code).toBe('BAD_USER_INPUT');
    }
    const notUuid = await gw.gql(
      `query { volumeByNativeId(backend: "os", nativeId: "not-a-uuid") { id } }`,
      {},
      member,
    );
    expect(notUuid.body.data.volumeByNativeId).toBeNull();
    const attach = await gw.gql(
      `mutation($i: AttachVolumeInput!) { attachVolume(input: $i) { operation { id } } }`,
      { i: { volumeId: id, target: { server: { serverId: '1234', tag: 'a/b' } } } },
      member,
    );
    expect(attach.body.errors[0].extensions.code).toBe('BAD_USER_INPUT');
    // Nova's device tag rule, OpenStack's own (adapters/openstack/attachments/input.ts): with a server id that passes, each bad tag is refused naming its argument.
    const server = os.sim.seedServer({ project: os.demo, name: 'tagged' });
    for (const tag of ['a/b', 'a,b', '', 'x'.repeat(61)]) {
      const res = await gw.gql(
        `mutation($i: AttachVolumeInput!) { attachVolume(input: $i) { operation { id } } }`,
        { i: { volumeId: id, target: { server: { serverId: server, tag } } } },
        member,
      );
      expect({ tag, error: res.body.errors?.[0] }).toMatchObject({
        tag,
        error: {
          message: 'input.target.server.tag must be 1-60 characters without "/" or ","',
          extensions: { code: 'BAD_USER_INPUT', argument: 'input.target.server.tag' },
        },
      });
    }
    // Only the Keystone validation and read-only calls may have happened: no write reached Cinder or Nova.
    expect((os.sim.requests() as any[]).filter((r) => r.method !== 'GET' && r.service !== 'keystone')).toEqual([]);
  });

  it('should answer CONFLICT from Cinder rules: delete of an in-use volume, legacy detach of a Nova-owned attachment', async () => {
    const server = os.sim.seedServer({ project: os.demo, name: 'rules' });
    const vid = os.sim.seedVolume({ project: os.demo, name: 'in-use', size: 1 });
    os.sim.attachNow(server, vid, {});
    const id = await gid(vid);
    const del = await gw.gql(
      `mutation($i: DeleteVolumeInput!) { deleteVolume(input: $i) { deletedId } }`,
      { i: { volumeId: id } },
      member,
    );
    expect(del.body.errors[0].extensions).toMatchObject({ code: 'CONFLICT', backend: 'os', httpStatus: 400 });
    expect(del.body.errors[0].extensions.backendMessage).toMatch(/^Invalid volume: Volume status must be available/);
    const detachNovaOwned = await gw.gql(
      mutation('detachCinderVolumeLegacy', 'volume { status }'),
      { i: { volumeId: id } },
      member,
    );
    expect(detachNovaOwned.body.errors[0].extensions).toMatchObject({ code: 'CONFLICT', httpStatus: 409 });
  });

  it('should update the Nova attachment: swap is refused by Nova unless Cinder migrates, deleteOnTermination changes in place', async () => {
    const server = os.sim.seedServer({ project: os.demo, name: 'upd' });
    const vid = os.sim.seedVolume({ project: os.demo, name: 'upd', size: 1 });
    os.sim.attachNow(server, vid, {});
    const id = await gid(vid);
    const UPDATE = `mutation($i: UpdateNovaVolumeAttachmentInput!) { updateNovaVolumeAttachment(input: $i) { operation { state kind } } }`;
    const dot = await gw.gql(UPDATE, { i: { volumeId: id, serverId: server, deleteOnTermination: true } }, member);
    expect(dot.body.errors).toBeUndefined();
    expect(dot.body.data.updateNovaVolumeAttachment.operation).toMatchObject({
      state: 'SUCCEEDED',
      kind: 'UPDATE_ATTACHMENT',
    });
    const list = await gw.gql(
      `query($s: ID!) { serverVolumeAttachments(serverId: $s) { volume { nativeId } deleteOnTermination } }`,
      { s: server },
      member,
    );
    expect(list.body.data.serverVolumeAttachments).toEqual([{ volume: { nativeId: vid }, deleteOnTermination: true }]);
    const other = await gid(os.sim.seedVolume({ project: os.demo, name: 'swap-target', size: 1 }));
    const swap = await gw.gql(UPDATE, { i: { volumeId: id, serverId: server, newVolumeId: other } }, member);
    expect(swap.body.errors[0].extensions).toMatchObject({ backend: 'os' });
  });
});
