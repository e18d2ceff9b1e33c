/**
 * Tracked operations against the OpenStack simulator: every asynchronous mutation returns an
 * VolumeOperation that the gateway drives to SUCCEEDED, FAILED or TIMED_OUT after the mutation's
 * request has ended. Attach completes on Cinder, detach on Nova (docs/operations.md).
 */
import {
  disposeAll,
  startGatewayFor,
  startOpenStack,
  type GatewayUnderTest,
  type OpenStackUnderTest,
  waitOperation,
} from '../support/harness';

const OP = 'operation { id kind state targetId backendStatus failureReason }';
const ATTACH = `mutation($i: AttachVolumeInput!) { attachVolume(input: $i) { ${OP} attachment { id state } volume { status } } }`;
const DETACH = `mutation($i: DetachVolumeInput!) { detachVolume(input: $i) { ${OP} volume { status } } }`;
const EXTEND = `mutation($i: ExtendVolumeInput!) { extendVolume(input: $i) { ${OP} volume { sizeBytes status } } }`;
const VOLUME = `query($id: ID!) { volume(id: $id) { id name status backendStatus sizeBytes details { ... on CinderVolumeDetails { sizeGiB } }
  attachments { id state nativeId device consumer { __typename ... on VolumeServerConsumer { serverId name } ... on VolumeHostConsumer { hostName } } } } }`;
const GiB = 2 ** 30;

describe('OpenStack tracked operations', () => {
  let os: OpenStackUnderTest;
  let gw: GatewayUnderTest;
  let auth: Record<string, string>;
  let server: string;
  const gid = async (nativeId: string): Promise<string> =>
    (
      await gw.gql(
        `query($n: String!, $p: String) { volumeByNativeId(backend: "os", namespace: $p, nativeId: $n) { id } }`,
        { n: nativeId, p: os.demo },
        auth,
      )
    ).body.data.volumeByNativeId.id;

  beforeEach(async () => {
    // createMs is long enough that the volume is still `creating` when the mutation answers on a loaded machine.
    os = await startOpenStack({
      delays: { attachMs: 60, detachMs: 60, extendMs: 60, createMs: 400, deleteMs: 60, snapshotMs: 60, revertMs: 60 },
    });
    server = os.sim.seedServer({ project: os.demo, name: 'app-1' });
    gw = await startGatewayFor([os.backend('os', { operationTimeoutMs: 1500 })], {
      operationOptions: { pollMs: 20, maxPollMs: 50 },
    });
    auth = { 'x-auth-token': os.demoToken };
  });
  afterEach(disposeAll);

  it('should create a volume, return a running operation at once and finish it after the request', async () => {
    const res = await gw.gql(
      `mutation($i: CreateVolumeInput!) { createVolume(input: $i) { ${OP} volume { id status backendStatus sizeBytes } } }`,
      {
        i: {
          backend: 'os',
          name: 'new-data',
          sizeGiB: 2,
          description: 'made by a test',
          metadata: [{ key: 'k', value: 'v' }],
        },
      },
      auth,
    );
    expect(res.body.errors).toBeUndefined();
    const { operation, volume } = res.body.data.createVolume;
    expect(operation).toMatchObject({ kind: 'CREATE_VOLUME', state: 'PENDING', targetId: volume.id });
    expect(volume).toMatchObject({ sizeBytes: 2 * GiB, status: 'CREATING', backendStatus: 'creating' });
    const done = await waitOperation(gw, operation.id, auth);
    expect(done).toMatchObject({ state: 'SUCCEEDED', backendStatus: 'available' });
    expect((await gw.gql(VOLUME, { id: volume.id }, auth)).body.data.volume.status).toBe('AVAILABLE');
    const post = (os.sim.requests() as any[]).find((r) => r.method === 'POST' && r.path.endsWith('/volumes'));
    expect(post).toBeDefined();
  });

  it('should attach through Nova and succeed once Cinder shows the volume in-use with the server', async () => {
    const vid = os.sim.seedVolume({ project: os.demo, name: 'data', size: 1 });
    const id = await gid(vid);
    const res = await gw.gql(
      ATTACH,
      { i: { volumeId: id, target: { server: { serverId: server, device: '/dev/vdb' } } } },
      auth,
    );
    expect(res.body.errors).toBeUndefined();
    expect(res.body.data.attachVolume.operation).toMatchObject({ kind: 'ATTACH_VOLUME', state: 'PENDING' });
    const done = await waitOperation(gw, res.body.data.attachVolume.operation.id, auth);
    expect(done).toMatchObject({ state: 'SUCCEEDED', backendStatus: 'in-use' });
    const v = (await gw.gql(VOLUME, { id }, auth)).body.data.volume;
    expect(v.status).toBe('IN_USE');
    expect(v.attachments).toEqual([
      expect.objectContaining({
        state: 'ATTACHED',
        consumer: { __typename: 'VolumeServerConsumer', serverId: server, name: 'app-1' },
      }),
    ]);
    const attach = (os.sim.requests() as any[]).find((r) => r.service === 'nova' && r.method === 'POST');
    expect(attach.path).toBe(`/v2.1/servers/${server}/os-volume_attachments`);
    // Completion was read on Cinder, not Nova.
    expect(
      (os.sim.requests() as any[]).filter(
        (r) => r.service === 'cinder' && r.method === 'GET' && r.path.endsWith(`/volumes/${vid}`),
      ).length,
    ).toBeGreaterThan(0);
  });

  it('should detach through Nova and succeed once Nova no longer lists the volume', async () => {
    const vid = os.sim.seedVolume({ project: os.demo, name: 'data', size: 1 });
    os.sim.attachNow(server, vid, { device: '/dev/vdb' });
    const id = await gid(vid);
    const res = await gw.gql(DETACH, { i: { volumeId: id, target: { server: { serverId: server } } } }, auth);
    expect(res.body.errors).toBeUndefined();
    const done = await waitOperation(gw, res.body.data.detachVolume.operation.id, auth);
    expect(done).toMatchObject({ kind: 'DETACH_VOLUME', state: 'SUCCEEDED' });
    expect((await gw.gql(VOLUME, { id }, auth)).body.data.volume).toMatchObject({
      status: 'AVAILABLE',
      attachments: [],
    });
    const lists = (os.sim.requests() as any[]).filter(
      (r) => r.service === 'nova' && r.method === 'GET' && r.path === `/v2.1/servers/${server}/os-volume_attachments`,
    );
    expect(lists.length).toBeGreaterThan(0);
  });

  it('should fail an attach that ends in error_attaching, with the reason', async () => {
    const vid = os.sim.seedVolume({ project: os.demo, name: 'data', size: 1 });
    os.sim.failNextAttach(vid);
    const res = await gw.gql(
      ATTACH,
      { i: { volumeId: await gid(vid), target: { server: { serverId: server } } } },
      auth,
    );
    expect(res.body.errors).toBeUndefined();
    const done = await waitOperation(gw, res.body.data.attachVolume.operation.id, auth);
    expect(done.state).toBe('FAILED');
    // The attachment went error_attaching and Nova rolled back: the reason names Nova's failed step, its request and Cinder's message.
    expect(done.failureReason).toMatch(
      /^Nova failed the attach at compute_attach_volume \(request req-[0-9a-f-]{36}\): update attachment:An unknown error occurred\.$/,
    );
  });

  it('should extend, refuse to shrink before any action call, and fail on error_extending with the user message', async () => {
    const vid = os.sim.seedVolume({ project: os.demo, name: 'data', size: 2 });
    const id = await gid(vid);
    os.sim.clearRequests();
    const shrink = await gw.gql(EXTEND, { i: { volumeId: id, newSizeGiB: 2 } }, auth);
    expect(shrink.body.errors[0].extensions).toMatchObject({ code: 'BAD_USER_INPUT' });
    expect(shrink.body.errors[0].message).toMatch(/larger than the current size \(2 GiB\)/);
    expect((os.sim.requests() as any[]).filter((r) => r.method === 'POST')).toHaveLength(0);
    const grow = await gw.gql(EXTEND, { i: { volumeId: id, newSizeGiB: 5 } }, auth);
    expect(grow.body.errors).toBeUndefined();
    expect(await waitOperation(gw, grow.body.data.extendVolume.operation.id, auth)).toMatchObject({
      kind: 'EXTEND_VOLUME',
      state: 'SUCCEEDED',
    });
    expect((await gw.gql(VOLUME, { id }, auth)).body.data.volume).toMatchObject({
      sizeBytes: 5 * GiB,
      details: { sizeGiB: 5 },
    });
    os.sim.failNextExtend(vid);
    const failing = await gw.gql(EXTEND, { i: { volumeId: id, newSizeGiB: 6 } }, auth);
    const failed = await waitOperation(gw, failing.body.data.extendVolume.operation.id, auth);
    expect(failed).toMatchObject({ state: 'FAILED', backendStatus: 'error_extending' });
    expect(failed.failureReason).toMatch(/^Cinder set the volume to error_extending/);
  });

  it('should time out a detach that stays detaching, naming the last status', async () => {
    const vid = os.sim.seedVolume({ project: os.demo, name: 'data', size: 1 });
    os.sim.attachNow(server, vid, {});
    os.sim.stickNextDetach(vid);
    const res = await gw.gql(
      DETACH,
      { i: { volumeId: await gid(vid), target: { server: { serverId: server } } } },
      auth,
    );
    const done = await waitOperation(gw, res.body.data.detachVolume.operation.id, auth);
    expect(done).toMatchObject({ state: 'TIMED_OUT', backendStatus: 'detaching' });
    expect(done.failureReason).toMatch(/last backend status: detaching/);
  });

  it('should keep an operation from other projects: its id reads as null', async () => {
    const vid = os.sim.seedVolume({ project: os.demo, name: 'data', size: 1 });
    const res = await gw.gql(EXTEND, { i: { volumeId: await gid(vid), newSizeGiB: 3 } }, auth);
    const opId = res.body.data.extendVolume.operation.id;
    const other = await gw.gql(
      `query($id: ID!) { volumeOperation(id: $id) { state } }`,
      { id: opId },
      { 'x-auth-token': os.otherToken },
    );
    expect(other.body.errors).toBeUndefined();
    expect(other.body.data.volumeOperation).toBeNull();
    // A second token of the same project may read it: it can read the target volume.
    const again = await gw.gql(
      `query($id: ID!) { volumeOperation(id: $id) { state } }`,
      { id: opId },
      { 'x-auth-token': os.sim.issueToken({ user: 'demo', project: 'demo' }) },
    );
    expect(again.body.data.volumeOperation).not.toBeNull();
  });

  it('should delete a volume, snapshot and revert, and delete the snapshot, each tracked to the end', async () => {
    const vid = os.sim.seedVolume({ project: os.demo, name: 'data', size: 1 });
    const id = await gid(vid);
    const snap = await gw.gql(
      `mutation($i: CreateVolumeSnapshotInput!) { createVolumeSnapshot(input: $i) { snapshot { id nativeId backendStatus sizeBytes volume { id } } ${OP} } }`,
      { i: { volumeId: id, name: 'snap-1', description: 'first' } },
      auth,
    );
    expect(snap.body.errors).toBeUndefined();
    expect(snap.body.data.createVolumeSnapshot.snapshot).toMatchObject({
      backendStatus: 'creating',
      sizeBytes: 2 ** 30,
      volume: { id },
    });
    expect(await waitOperation(gw, snap.body.data.createVolumeSnapshot.operation.id, auth)).toMatchObject({
      kind: 'CREATE_SNAPSHOT',
      state: 'SUCCEEDED',
    });
    const list = await gw.gql(`{ volumeSnapshots(backend: "os") { nodes { id name ready backendStatus } } }`, {}, auth);
    expect(list.body.data.volumeSnapshots.nodes).toEqual([
      expect.objectContaining({ name: 'snap-1', ready: true, backendStatus: 'available' }),
    ]);
    const revert = await gw.gql(
      `mutation($i: RevertCinderVolumeToSnapshotInput!) { revertCinderVolumeToSnapshot(input: $i) { ${OP} } }`,
      { i: { volumeId: id, snapshotId: snap.body.data.createVolumeSnapshot.snapshot.id } },
      auth,
    );
    expect(revert.body.errors).toBeUndefined();
    expect(await waitOperation(gw, revert.body.data.revertCinderVolumeToSnapshot.operation.id, auth)).toMatchObject({
      kind: 'REVERT_VOLUME',
      state: 'SUCCEEDED',
    });
    const delSnap = await gw.gql(
      `mutation($i: DeleteVolumeSnapshotInput!) { deleteVolumeSnapshot(input: $i) { deletedId ${OP} } }`,
      { i: { snapshotId: snap.body.data.createVolumeSnapshot.snapshot.id } },
      auth,
    );
    expect(await waitOperation(gw, delSnap.body.data.deleteVolumeSnapshot.operation.id, auth)).toMatchObject({
      kind: 'DELETE_SNAPSHOT',
      state: 'SUCCEEDED',
    });
    const del = await gw.gql(
      `mutation($i: DeleteVolumeInput!) { deleteVolume(input: $i) { deletedId ${OP} } }`,
      { i: { volumeId: id } },
      auth,
    );
    expect(del.body.errors).toBeUndefined();
    expect(await waitOperation(gw, del.body.data.deleteVolume.operation.id, auth)).toMatchObject({
      kind: 'DELETE_VOLUME',
      state: 'SUCCEEDED',
    });
    expect((await gw.gql(VOLUME, { id }, auth)).body.data.volume).toBeNull();
  });

  it('should attach a host through the attachments API (create with connector, complete) and detach it by attachment id', async () => {
    const vid = os.sim.seedVolume({ project: os.demo, name: 'data', size: 1 });
    const id = await gid(vid);
    const connector = {
      host: 'bm-7',
      initiator: 'iqn.1993-08.org.debian:01:bm7',
      ip: '10.0.0.7',
      platform: 'x86_64',
      osType: 'linux',
      multipath: false,
    };
    const res = await gw.gql(ATTACH, { i: { volumeId: id, target: { host: { connector } } } }, auth);
    expect(res.body.errors).toBeUndefined();
    expect(res.body.data.attachVolume.attachment).toMatchObject({ state: 'ATTACHED' });
    expect(await waitOperation(gw, res.body.data.attachVolume.operation.id, auth)).toMatchObject({
      state: 'SUCCEEDED',
      backendStatus: 'in-use',
    });
    const v = (await gw.gql(VOLUME, { id }, auth)).body.data.volume;
    expect(v.attachments[0].consumer.__typename).toBe('VolumeHostConsumer');
    const listed = await gw.gql(
      `query($v: ID) { cinderHostAttachments(backend: "os", volumeId: $v) { nodes { id nativeId state access } } }`,
      { v: id },
      auth,
    );
    expect(listed.body.data.cinderHostAttachments.nodes).toEqual([
      expect.objectContaining({ state: 'ATTACHED', access: 'READ_WRITE', nativeId: v.attachments[0].nativeId }),
    ]);
    const det = await gw.gql(
      DETACH,
      { i: { volumeId: id, target: { host: { hostAttachmentId: v.attachments[0].id } } } },
      auth,
    );
    expect(det.body.errors).toBeUndefined();
    expect(await waitOperation(gw, det.body.data.detachVolume.operation.id, auth)).toMatchObject({
      state: 'SUCCEEDED',
    });
    const paths = (os.sim.requests() as any[])
      .filter((r) => r.service === 'cinder' && r.method !== 'GET')
      .map((r) => `${r.method} ${r.path.replace(/[0-9a-f-]{36}/g, ':id').replace(/\/v3\/[0-9a-f]+/, '')}`);
    expect(paths).toEqual(['POST /attachments', 'POST /attachments/:id/action', 'DELETE /attachments/:id']);
  });

  it('should reserve, update and complete a host attachment step by step', async () => {
    const vid = os.sim.seedVolume({ project: os.demo, name: 'data', size: 1 });
    const id = await gid(vid);
    const r = await gw.gql(
      `mutation($i: ReserveCinderVolumeHostAttachmentInput!) { reserveCinderVolumeHostAttachment(input: $i) { attachment { id nativeId state backendState } } }`,
      { i: { volumeId: id } },
      auth,
    );
    expect(r.body.errors).toBeUndefined();
    expect(r.body.data.reserveCinderVolumeHostAttachment.attachment).toMatchObject({
      state: 'ATTACHING',
      backendState: 'reserved',
    });
    expect((await gw.gql(VOLUME, { id }, auth)).body.data.volume.status).toBe('RESERVED');
    const aid = r.body.data.reserveCinderVolumeHostAttachment.attachment.id;
    const u = await gw.gql(
      `mutation($i: UpdateCinderVolumeHostAttachmentInput!) { updateCinderVolumeHostAttachment(input: $i) { attachment { state backendState } } }`,
      { i: { attachmentId: aid, connector: { host: 'bm-8', initiator: 'iqn.x' } } },
      auth,
    );
    expect(u.body.errors).toBeUndefined();
    expect(u.body.data.updateCinderVolumeHostAttachment.attachment).toMatchObject({
      state: 'ATTACHING',
      backendState: 'attaching',
    });
    const c = await gw.gql(
      `mutation($i: CompleteCinderVolumeHostAttachmentInput!) { completeCinderVolumeHostAttachment(input: $i) { attachment { state } } }`,
      { i: { attachmentId: aid } },
      auth,
    );
    expect(c.body.errors).toBeUndefined();
    expect(c.body.data.completeCinderVolumeHostAttachment.attachment).toMatchObject({ state: 'ATTACHED' });
    expect((await gw.gql(VOLUME, { id }, auth)).body.data.volume.status).toBe('IN_USE');
  });
});
