/**
 * Errors that say what happened (issue 9, item 6), over HTTP against the simulators: Cinder's
 * traceback never reaches the client, state conflicts are CONFLICT on both backend kinds, and an
 * over-quota create is QUOTA_EXCEEDED, not an outage.
 */
import type { NomadSimulator } from '../../simulators/nomad';
import {
  MGMT,
  disposeAll,
  seedVolumes,
  startGatewayFor,
  startNomad,
  startOpenStack,
  type GatewayUnderTest,
  type OpenStackUnderTest,
} from '../support/harness';

/** Nothing of a server's insides: no traceback, no file path, no address. */
function expectNoLeak(err: { message: string; extensions: Record<string, unknown> }): void {
  for (const text of [err.message, JSON.stringify(err.extensions)]) {
    expect(text).not.toMatch(
      /Traceback|File "|dist-packages|\/usr\/lib|line \d+, in|127\.0\.0\.1|10\.0\.3\.7|:\d{4,5}\b/,
    );
  }
}

describe('OpenStack: Cinder and Nova refusals', () => {
  let os: OpenStackUnderTest;
  let gw: GatewayUnderTest;
  let member: Record<string, string>;
  let server: string;
  const gid = async (nativeId: string): Promise<string> =>
    (
      await gw.gql(
        `query($n: String!, $p: String) { volumeByNativeId(backend: "os", namespace: $p, nativeId: $n) { id } }`,
        { n: nativeId, p: os.demo },
        member,
      )
    ).body.data.volumeByNativeId.id;

  beforeAll(async () => {
    os = await startOpenStack({ delays: { createMs: 20, attachMs: 20, attachCompleteMs: 10 } });
    gw = await startGatewayFor([os.backend('os')], { operationOptions: { pollMs: 20, maxPollMs: 50 } });
    member = { 'x-auth-token': os.demoToken };
    server = os.sim.seedServer({ project: os.demo, name: 'web' });
  });
  afterAll(disposeAll);

  it("should answer a legacy os-attach of an in-use volume with CONFLICT and Cinder's first line only, never its traceback", async () => {
    const vid = os.sim.seedVolume({ project: os.demo, name: 'busy', size: 1 });
    os.sim.attachNow(server, vid, {});
    const other = os.sim.seedServer({ project: os.demo, name: 'second' });
    os.sim.clearRequests();
    const res = await gw.gql(
      `mutation($i: AttachCinderVolumeLegacyInput!) { attachCinderVolumeLegacy(input: $i) { volume { id } } }`,
      { i: { volumeId: await gid(vid), serverId: other, mountpoint: '/dev/vdd' } },
      member,
    );
    // The simulator answered what the real Cinder did: the traceback inside the 400 message.
    const wire = (os.sim.requests() as any[]).find((r) => r.method === 'POST' && r.path.endsWith('/action'));
    expect(wire).toBeDefined();
    const err = res.body.errors[0];
    expect(err.extensions).toEqual({
      code: 'CONFLICT',
      retryable: false,
      backend: 'os',
      httpStatus: 400,
      backendMessage: 'Invalid volume: volume is already attached and multiple attachments are not enabled',
    });
    expect(err.message).toMatch(
      /^Cinder refused it in the volume's current state while .* on backend "os" \(Cinder\): Invalid volume: volume is already attached and multiple attachments are not enabled$/,
    );
    expectNoLeak(err);
  });

  it('should answer attaching an attached volume through Nova (400 "already attached") with CONFLICT', async () => {
    const vid = os.sim.seedVolume({ project: os.demo, name: 'attached', size: 1 });
    os.sim.attachNow(server, vid, {});
    const res = await gw.gql(
      `mutation($i: AttachVolumeInput!) { attachVolume(input: $i) { operation { id } } }`,
      { i: { volumeId: await gid(vid), target: { server: { serverId: server } } } },
      member,
    );
    expect(res.body.errors[0].extensions).toMatchObject({
      code: 'CONFLICT',
      backend: 'os',
      httpStatus: 400,
      retryable: false,
    });
    expect(res.body.errors[0].extensions.backendMessage).toMatch(
      /^Invalid volume: volume [0-9a-f-]{36} already attached|is already attached to instances/,
    );
  });

  it('should answer reserving a host attachment on an in-use volume (Cinder 400 "status must be available") with CONFLICT', async () => {
    const vid = os.sim.seedVolume({ project: os.demo, name: 'reserved-elsewhere', size: 1 });
    os.sim.attachNow(server, vid, {});
    const res = await gw.gql(
      `mutation($i: ReserveCinderVolumeHostAttachmentInput!) { reserveCinderVolumeHostAttachment(input: $i) { attachment { id } } }`,
      { i: { volumeId: await gid(vid) } },
      member,
    );
    expect(res.body.errors[0].extensions).toMatchObject({ code: 'CONFLICT', httpStatus: 400 });
    expect(res.body.errors[0].extensions.backendMessage).toMatch(
      /status must be available or downloading to reserve, but the current status is in-use\.$/,
    );
  });

  it("should answer an over-quota create with QUOTA_EXCEEDED (not retryable), Cinder's text and its Retry-After", async () => {
    os.sim.setQuota(os.demo, { gigabytes: 5 });
    try {
      const used = (
        await gw.gql(
          `{ volumes(first: 100) { nodes { details { ... on CinderVolumeDetails { sizeGiB } } } } }`,
          {},
          member,
        )
      ).body.data.volumes.nodes.reduce((n: number, v: { details: { sizeGiB: number } }) => n + v.details.sizeGiB, 0);
      const res = await gw.gql(
        `mutation { createVolume(input: { backend: "os", name: "big", sizeGiB: 10 }) { volume { id } } }`,
        {},
        member,
      );
      expect(res.body.errors[0].extensions).toEqual({
        code: 'QUOTA_EXCEEDED',
        retryable: false,
        backend: 'os',
        httpStatus: 413,
        retryAfterSeconds: 0,
        backendMessage: `VolumeSizeExceedsAvailableQuota: Requested volume or snapshot exceeds allowed gigabytes quota. Requested 10G, quota is 5G and ${used}G has been consumed.`,
      });
      os.sim.setQuota(os.demo, { gigabytes: -1, volumes: 0 });
      const count = await gw.gql(
        `mutation { createVolume(input: { backend: "os", name: "one-more", sizeGiB: 1 }) { volume { id } } }`,
        {},
        member,
      );
      expect(count.body.errors[0].extensions).toMatchObject({
        code: 'QUOTA_EXCEEDED',
        backendMessage: "VolumeLimitExceeded: Maximum number of volumes allowed (0) exceeded for quota 'volumes'.",
      });
    } finally {
      os.sim.setQuota(os.demo, null);
    }
    const fine = await gw.gql(
      `mutation { createVolume(input: { backend: "os", name: "small", sizeGiB: 1 }) { volume { id } } }`,
      {},
      member,
    );
    expect(fine.body.errors).toBeUndefined();
  });
});

describe('Nomad: claim conflicts and internal addresses', () => {
  let sim: NomadSimulator;
  let gw: GatewayUnderTest;
  const admin = { 'x-nomad-token': MGMT };
  const gid = (parts: string[]): string => Buffer.from(JSON.stringify(parts)).toString('base64url');

  beforeAll(async () => {
    sim = await startNomad();
    seedVolumes(sim, 2);
    gw = await startGatewayFor([{ id: 'east', url: sim.url, readRetries: 0 }]);
  });
  afterAll(disposeAll);

  it('should answer re-registering a claimed volume with other mount options (Nomad: "volume is in use") with CONFLICT', async () => {
    sim.placeAllocation({
      jobId: 'db',
      nodeId: 'node-1111',
      volumes: [
        { volumeId: 'vol-000', mode: 'write', accessMode: 'single-node-writer', attachmentMode: 'file-system' },
      ],
    });
    const res = await gw.gql(
      `mutation { registerNomadVolume(input: { backend: "east", nativeId: "vol-000", name: "vol 0", plugin: "aws-ebs0", externalId: "ext-default-vol-000", mountOptions: { fsType: "xfs" }, capabilities: [{ accessMode: SINGLE_NODE_WRITER, attachmentMode: FILE_SYSTEM }] }) { volume { id } } }`,
      {},
      admin,
    );
    expect(res.body.errors[0].extensions).toMatchObject({
      code: 'CONFLICT',
      backend: 'east',
      httpStatus: 500,
      retryable: false,
    });
    expect(res.body.errors[0].extensions.backendMessage).toMatch(/can not update mount options while volume is in use/);
  });

  it('should answer deregistering a claimed volume with CONFLICT', async () => {
    const res = await gw.gql(
      `mutation($id: ID!) { deregisterNomadVolume(input: { volumeId: $id }) { deletedId } }`,
      { id: gid(['Volume', 'east', 'default', 'vol-000']) },
      admin,
    );
    expect(res.body.errors[0].extensions).toMatchObject({ code: 'CONFLICT', backendMessage: 'volume in use: vol-000' });
  });

  it('should strip an internal address from a Nomad RPC error', async () => {
    sim.failNext({
      count: 1,
      status: 500,
      body: 'rpc error: failed to get conn: dial tcp 10.0.3.7:4647: connect: connection refused',
      pathPrefix: '/v1/volume/csi/vol-001',
    });
    const res = await gw.gql(
      `mutation($id: ID!) { deregisterNomadVolume(input: { volumeId: $id }) { deletedId } }`,
      { id: gid(['Volume', 'east', 'default', 'vol-001']) },
      admin,
    );
    const err = res.body.errors[0];
    expect(err.extensions).toMatchObject({
      code: 'BACKEND_UNAVAILABLE',
      backendMessage: 'rpc error: failed to get conn: dial tcp [host]: connect: connection refused',
    });
    expectNoLeak(err);
  });
});
