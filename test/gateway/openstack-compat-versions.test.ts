/**
 * Compatibility of the OpenStack adapter across the clouds it claims to support (docs/openstack.md
 * "Microversions"): an old cloud (Cinder 3.0, Nova 2.1) works with its features degraded and
 * refused before any call, a new Nova (≥ 2.101: attach answers 202 without a body) is tracked
 * the same, and a 3.71 Cinder gets the extend-completion action. The gateway talks HTTP to the
 * OpenStack simulator; assertions read its request log. (openstack-compat-availability.test.ts
 * has the gateway's own Keystone credential and Cinder outages.)
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
const EXTEND = `mutation($i: ExtendVolumeInput!) { extendVolume(input: $i) { ${OP} volume { sizeBytes status } } }`;
const VOLUME = `query($id: ID!) { volume(id: $id) { id name status backendStatus sizeBytes details { ... on CinderVolumeDetails { sizeGiB } } attachments { state consumer { __typename ... on VolumeServerConsumer { serverId name } } } } }`;
const LIST = `query($f: VolumeFilter) { volumes(first: 50, filter: $f) { nodes { id backend { id } name status details { ... on CinderVolumeDetails { sizeGiB } } } } }`;
const FAST = {
  attachMs: 30,
  attachCompleteMs: 20,
  detachMs: 30,
  extendMs: 30,
  createMs: 30,
  deleteMs: 30,
  snapshotMs: 30,
  revertMs: 30,
};

type Logged = {
  service: string;
  method: string;
  path: string;
  action?: string;
  status: number;
  microversion: string | null;
};
const log = (os: OpenStackUnderTest): Logged[] => os.sim.requests();

/** Global id of a Cinder volume, read through the gateway. */
async function gidOf(
  gw: GatewayUnderTest,
  os: OpenStackUnderTest,
  nativeId: string,
  auth: Record<string, string>,
): Promise<string> {
  const res = await gw.gql(
    `query($n: String!, $p: String) { volumeByNativeId(backend: "os", namespace: $p, nativeId: $n) { id } }`,
    { n: nativeId, p: os.demo },
    auth,
  );
  const id = res.body.data?.volumeByNativeId?.id;
  if (!id) throw new Error(`volume ${nativeId} not readable: ${JSON.stringify(res.body)}`);
  return id;
}

describe('an old cloud: Cinder 3.0 and Nova 2.1', () => {
  let os: OpenStackUnderTest;
  let gw: GatewayUnderTest;
  let auth: Record<string, string>;
  let server: string;
  const gid = (nativeId: string): Promise<string> => gidOf(gw, os, nativeId, auth);

  beforeAll(async () => {
    os = await startOpenStack({ cinderMaxVersion: '3.0', novaMaxVersion: '2.1', delays: FAST });
    server = os.sim.seedServer({ project: os.demo, name: 'old-app' });
    for (let i = 0; i < 3; i++) os.sim.seedVolume({ project: os.demo, name: `old-${i}`, size: 1 + i });
    gw = await startGatewayFor([os.backend('os', { operationTimeoutMs: 3000 })], {
      operationOptions: { pollMs: 20, maxPollMs: 50 },
    });
    auth = { 'x-auth-token': os.demoToken };
  });
  afterAll(disposeAll);

  it('should list and read volumes, sending the cloud maximum as the microversion', async () => {
    os.sim.clearRequests();
    const list = await gw.gql(LIST, {}, auth);
    expect(list.body.errors).toBeUndefined();
    expect(list.body.data.volumes.nodes.map((v: any) => `${v.name}:${v.details.sizeGiB}:${v.status}`)).toEqual([
      'old-0:1:AVAILABLE',
      'old-1:2:AVAILABLE',
      'old-2:3:AVAILABLE',
    ]);
    const one = await gw.gql(VOLUME, { id: list.body.data.volumes.nodes[1].id }, auth);
    expect(one.body.errors).toBeUndefined();
    expect(one.body.data.volume).toMatchObject({
      name: 'old-1',
      sizeBytes: 2 * 2 ** 30,
      details: { sizeGiB: 2 },
      status: 'AVAILABLE',
      backendStatus: 'available',
      attachments: [],
    });
    const cinder = log(os).filter((r) => r.service === 'cinder' && /\/volumes(\/detail|\/[0-9a-f-]{36})$/.test(r.path));
    expect(cinder.length).toBeGreaterThanOrEqual(2);
    for (const r of cinder) expect(r).toMatchObject({ status: 200, microversion: 'volume 3.0' });
    // Every API call (all but the version documents) carries the cloud's maximum.
    const api = log(os).filter((r) => r.service !== 'keystone' && r.path !== '/v3/' && r.path !== '/v2.1/');
    expect(new Set(api.map((r) => r.microversion))).toEqual(new Set(['volume 3.0']));
    const named = await gw.gql(LIST, { f: { name: 'old-2' } }, auth);
    expect(named.body.data.volumes.nodes.map((v: any) => v.name)).toEqual(['old-2']);
  });

  it('should attach through Nova at 2.1 and drive the operation to SUCCEEDED', async () => {
    const vid = os.sim.seedVolume({ project: os.demo, name: 'attach-me', size: 1 });
    const id = await gid(vid);
    os.sim.clearRequests();
    const res = await gw.gql(ATTACH, { i: { volumeId: id, target: { server: { serverId: server } } } }, auth);
    expect(res.body.errors).toBeUndefined();
    const done = await waitOperation(gw, res.body.data.attachVolume.operation.id, auth);
    expect(done).toMatchObject({ kind: 'ATTACH_VOLUME', state: 'SUCCEEDED', backendStatus: 'in-use' });
    const v = (await gw.gql(VOLUME, { id }, auth)).body.data.volume;
    expect(v).toMatchObject({
      status: 'IN_USE',
      attachments: [
        { state: 'ATTACHED', consumer: { __typename: 'VolumeServerConsumer', serverId: server, name: 'old-app' } },
      ],
    });
    const post = log(os).find((r) => r.service === 'nova' && r.method === 'POST');
    expect(post).toMatchObject({
      path: `/v2.1/servers/${server}/os-volume_attachments`,
      status: 200,
      microversion: 'compute 2.1',
    });
    for (const r of log(os).filter((x) => x.service === 'nova' && x.path.startsWith('/v2.1/servers')))
      expect(r.microversion).toBe('compute 2.1');
  });

  it('should detach through Nova at 2.1 and drive the operation to SUCCEEDED', async () => {
    const vid = os.sim.seedVolume({ project: os.demo, name: 'detach-me', size: 1 });
    os.sim.attachNow(server, vid, {});
    const id = await gid(vid);
    os.sim.clearRequests();
    const res = await gw.gql(
      `mutation($i: DetachVolumeInput!) { detachVolume(input: $i) { ${OP} } }`,
      { i: { volumeId: id, target: { server: { serverId: server } } } },
      auth,
    );
    expect(res.body.errors).toBeUndefined();
    expect(await waitOperation(gw, res.body.data.detachVolume.operation.id, auth)).toMatchObject({
      kind: 'DETACH_VOLUME',
      state: 'SUCCEEDED',
    });
    expect((await gw.gql(VOLUME, { id }, auth)).body.data.volume).toMatchObject({
      status: 'AVAILABLE',
      attachments: [],
    });
    expect(log(os).find((r) => r.service === 'nova' && r.method === 'DELETE')).toMatchObject({
      status: 202,
      microversion: 'compute 2.1',
    });
  });

  it('should extend an available volume at 3.0 (only in-use extends need 3.42)', async () => {
    const vid = os.sim.seedVolume({ project: os.demo, name: 'grow-me', size: 1 });
    const id = await gid(vid);
    os.sim.clearRequests();
    const res = await gw.gql(EXTEND, { i: { volumeId: id, newSizeGiB: 3 } }, auth);
    expect(res.body.errors).toBeUndefined();
    expect(await waitOperation(gw, res.body.data.extendVolume.operation.id, auth)).toMatchObject({
      kind: 'EXTEND_VOLUME',
      state: 'SUCCEEDED',
      backendStatus: 'available',
    });
    expect((await gw.gql(VOLUME, { id }, auth)).body.data.volume).toMatchObject({
      sizeBytes: 3 * 2 ** 30,
      details: { sizeGiB: 3 },
    });
    expect(log(os).find((r) => r.action === 'os-extend')).toMatchObject({ status: 202, microversion: 'volume 3.0' });
  });

  it('should name the failed status without user messages (3.3) and never ask for them', async () => {
    const vid = os.sim.seedVolume({ project: os.demo, name: 'fail-grow', size: 1 });
    const id = await gid(vid);
    os.sim.failNextExtend(vid);
    os.sim.clearRequests();
    const res = await gw.gql(EXTEND, { i: { volumeId: id, newSizeGiB: 2 } }, auth);
    expect(res.body.errors).toBeUndefined();
    const done = await waitOperation(gw, res.body.data.extendVolume.operation.id, auth);
    expect(done).toMatchObject({
      state: 'FAILED',
      backendStatus: 'error_extending',
      failureReason: 'Cinder set the volume to error_extending',
    });
    expect(log(os).filter((r) => r.path.endsWith('/messages'))).toHaveLength(0);
  });

  /** Runs `query` and expects UNSUPPORTED_BY_BACKEND naming needed and offered versions, with no request to `endpoint`. */
  async function refused(
    query: string,
    variables: Record<string, unknown>,
    need: RegExp,
    endpoint: (r: Logged) => boolean,
  ): Promise<void> {
    os.sim.clearRequests();
    const res = await gw.gql(query, variables, auth);
    expect(res.body.errors).toHaveLength(1);
    expect(res.body.errors[0].extensions).toMatchObject({ code: 'UNSUPPORTED_BY_BACKEND', backend: 'os' });
    expect(res.body.errors[0].message).toMatch(need);
    expect(log(os).filter(endpoint)).toEqual([]);
  }
  const attachmentsApi = (r: Logged): boolean => r.service === 'cinder' && r.path.includes('/attachments');
  const novaAttach = (r: Logged): boolean => r.service === 'nova' && r.method === 'POST';
  const CONNECTOR = {
    host: 'bm-1',
    initiator: 'iqn.1993-08.org.debian:01:bm1',
    ip: '10.0.0.1',
    platform: 'x86_64',
    osType: 'linux',
    multipath: false,
  };

  it('should refuse host attachments (Cinder 3.27) before calling the attachments API', async () => {
    const id = await gid(os.sim.seedVolume({ project: os.demo, name: 'host-me', size: 1 }));
    const need = /needs Cinder microversion 3\.27, the cloud offers up to 3\.0/;
    await refused(ATTACH, { i: { volumeId: id, target: { host: { connector: CONNECTOR } } } }, need, attachmentsApi);
    await refused(
      `mutation($i: ReserveCinderVolumeHostAttachmentInput!) { reserveCinderVolumeHostAttachment(input: $i) { attachment { id } } }`,
      { i: { volumeId: id } },
      need,
      attachmentsApi,
    );
    await refused(`query { cinderHostAttachments(backend: "os") { nodes { id } } }`, {}, need, attachmentsApi);
    // A read-only host attach needs even more (3.54) and is refused the same way.
    await refused(
      ATTACH,
      { i: { volumeId: id, target: { host: { connector: CONNECTOR, readOnly: true } } } },
      /needs Cinder microversion 3\.54, the cloud offers up to 3\.0/,
      attachmentsApi,
    );
    expect(os.sim.volume(await nativeOf(id))?.status).toBe('available');
  });

  it('should refuse revert (Cinder 3.40) before sending the action', async () => {
    const vid = os.sim.seedVolume({ project: os.demo, name: 'revert-me', size: 1 });
    const snap = os.sim.seedSnapshot({ volumeId: vid, name: 'snap-old' });
    const id = await gid(vid);
    const snaps = await gw.gql(`{ volumeSnapshots(backend: "os") { nodes { id nativeId } } }`, {}, auth);
    expect(snaps.body.errors).toBeUndefined();
    const snapshotId = snaps.body.data.volumeSnapshots.nodes.find((s: any) => s.nativeId === snap).id;
    await refused(
      `mutation($i: RevertCinderVolumeToSnapshotInput!) { revertCinderVolumeToSnapshot(input: $i) { ${OP} } }`,
      { i: { volumeId: id, snapshotId } },
      /needs Cinder microversion 3\.40, the cloud offers up to 3\.0/,
      (r) => r.method === 'POST',
    );
  });

  it('should refuse extending an in-use volume (Cinder 3.42) before sending os-extend', async () => {
    const vid = os.sim.seedVolume({ project: os.demo, name: 'busy', size: 1 });
    os.sim.attachNow(server, vid, {});
    await refused(
      EXTEND,
      { i: { volumeId: await gid(vid), newSizeGiB: 2 } },
      /extending an attached \(in-use\) volume: it needs Cinder microversion 3\.42, the cloud offers up to 3\.0/,
      (r) => r.method === 'POST',
    );
    expect(os.sim.volume(vid)).toMatchObject({ status: 'in-use', size: 1 });
  });

  it('should refuse attach options above Nova 2.1 (tag 2.49, deleteOnTermination 2.79) before calling Nova', async () => {
    const vid = os.sim.seedVolume({ project: os.demo, name: 'tag-me', size: 1 });
    const id = await gid(vid);
    await refused(
      ATTACH,
      { i: { volumeId: id, target: { server: { serverId: server, tag: 'data' } } } },
      /needs Nova microversion 2\.49, the cloud offers up to 2\.1/,
      novaAttach,
    );
    await refused(
      ATTACH,
      { i: { volumeId: id, target: { server: { serverId: server, deleteOnTermination: true } } } },
      /needs Nova microversion 2\.79, the cloud offers up to 2\.1/,
      novaAttach,
    );
    expect(os.sim.volume(vid)?.status).toBe('available');
  });

  it('should refuse completeCinderVolumeExtend (Cinder 3.71) before sending the action', async () => {
    const id = await gid(os.sim.seedVolume({ project: os.demo, name: 'complete-me', size: 1 }));
    await refused(
      `mutation($i: CompleteCinderVolumeExtendInput!) { completeCinderVolumeExtend(input: $i) { volume { id } } }`,
      { i: { volumeId: id, error: false } },
      /needs Cinder microversion 3\.71, the cloud offers up to 3\.0/,
      (r) => r.method === 'POST',
    );
  });

  /** Native id of a global volume id (read back through the gateway). */
  async function nativeOf(id: string): Promise<string> {
    return (await gw.gql(`query($id: ID!) { volume(id: $id) { nativeId } }`, { id }, auth)).body.data.volume.nativeId;
  }
});

describe('a new Nova: attach answers 202 without a body', () => {
  afterEach(disposeAll);

  it.each([
    ['2.101', 'compute 2.101'],
    // Newer than the adapter knows: it asks for the highest version it does know.
    ['2.104', 'compute 2.101'],
  ])('should track an attach on Nova %s to SUCCEEDED (sent as %s)', async (novaMaxVersion, sent) => {
    const os = await startOpenStack({ novaMaxVersion, delays: FAST });
    const server = os.sim.seedServer({ project: os.demo, name: 'new-app' });
    const vid = os.sim.seedVolume({ project: os.demo, name: 'data', size: 1 });
    const gw = await startGatewayFor([os.backend('os', { operationTimeoutMs: 3000 })], {
      operationOptions: { pollMs: 20, maxPollMs: 50 },
    });
    const auth = { 'x-auth-token': os.demoToken };
    const id = await gidOf(gw, os, vid, auth);
    const res = await gw.gql(
      ATTACH,
      { i: { volumeId: id, target: { server: { serverId: server, tag: 'db', deleteOnTermination: false } } } },
      auth,
    );
    expect(res.body.errors).toBeUndefined();
    expect(res.body.data.attachVolume).toMatchObject({
      operation: { kind: 'ATTACH_VOLUME', state: 'PENDING' },
      attachment: null,
    });
    const done = await waitOperation(gw, res.body.data.attachVolume.operation.id, auth);
    expect(done).toMatchObject({ state: 'SUCCEEDED', backendStatus: 'in-use' });
    const post = log(os).find((r) => r.service === 'nova' && r.method === 'POST');
    expect(post).toMatchObject({ status: 202, microversion: sent });
    expect((await gw.gql(VOLUME, { id }, auth)).body.data.volume).toMatchObject({
      status: 'IN_USE',
      attachments: [{ state: 'ATTACHED', consumer: { serverId: server, name: 'new-app' } }],
    });
    const listed = await gw.gql(
      `query($s: ID!) { serverVolumeAttachments(serverId: $s) { volume { nativeId } nativeId tag deleteOnTermination } }`,
      { s: server },
      auth,
    );
    expect(listed.body.errors).toBeUndefined();
    expect(listed.body.data.serverVolumeAttachments).toEqual([
      { volume: { nativeId: vid }, nativeId: expect.any(String), tag: 'db', deleteOnTermination: false },
    ]);
  });
});

describe('Cinder 3.71: completing an attached extend', () => {
  afterEach(disposeAll);

  it('should send os-extend_volume_completion and finish the pending in-use extend', async () => {
    // In-use extends wait for Nova's completion here: make them wait "forever" unless completed.
    const os = await startOpenStack({ cinderMaxVersion: '3.71', delays: { ...FAST, extendMs: 600_000 } });
    const server = os.sim.seedServer({ project: os.demo, name: 'app' });
    const vid = os.sim.seedVolume({ project: os.demo, name: 'grow-attached', size: 1 });
    os.sim.attachNow(server, vid, {});
    const gw = await startGatewayFor([os.backend('os', { operationTimeoutMs: 10_000 })], {
      operationOptions: { pollMs: 20, maxPollMs: 50 },
    });
    const member = { 'x-auth-token': os.demoToken };
    const admin = { 'x-auth-token': os.adminToken };
    const id = await gidOf(gw, os, vid, member);
    const grow = await gw.gql(EXTEND, { i: { volumeId: id, newSizeGiB: 4 } }, member);
    expect(grow.body.errors).toBeUndefined();
    expect(log(os).find((r) => r.action === 'os-extend')).toMatchObject({ status: 202, microversion: 'volume 3.71' });
    expect(os.sim.volume(vid)?.status).toBe('extending');
    const complete = await gw.gql(
      `mutation($i: CompleteCinderVolumeExtendInput!) { completeCinderVolumeExtend(input: $i) { volume { status } operation { kind state } } }`,
      { i: { volumeId: id, error: false } },
      admin,
    );
    expect(complete.body.errors).toBeUndefined();
    expect(log(os).filter((r) => r.action === 'os-extend_volume_completion')).toEqual([
      expect.objectContaining({ status: 202, microversion: 'volume 3.71' }),
    ]);
    expect(await waitOperation(gw, grow.body.data.extendVolume.operation.id, member)).toMatchObject({
      state: 'SUCCEEDED',
      backendStatus: 'in-use',
    });
    expect((await gw.gql(VOLUME, { id }, member)).body.data.volume).toMatchObject({
      status: 'IN_USE',
      sizeBytes: 4 * 2 ** 30,
      details: { sizeGiB: 4 },
    });
  });
});
