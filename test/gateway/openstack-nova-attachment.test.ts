/**
 * A Nova server's attachment used where a host attachment (Cinder's attachments API) is expected
 * (issue 17, item 8; docs/reliability.md R8), over HTTP against the OpenStack simulator. Its gateway
 * id carries the server's id: the gateway used to send `DELETE /attachments/<server id>` and
 * answer a misleading NOT_FOUND. Now it reads the volume's attachments and refuses before any
 * write, naming the mutation to use; the simulator answers a direct delete of Nova's attachment
 * with Cinder's recorded 409.
 */
import { encodeGlobalId } from '../../adapters/contract/ids';
import {
  disposeAll,
  startGatewayFor,
  startOpenStack,
  waitOperation,
  type GatewayUnderTest,
  type OpenStackUnderTest,
} from '../support/harness';

const DETACH = 'mutation($i: DetachVolumeInput!) { detachVolume(input: $i) { operation { id } } }';
const UPDATE =
  'mutation($i: UpdateCinderVolumeHostAttachmentInput!) { updateCinderVolumeHostAttachment(input: $i) { attachment { id } } }';
const COMPLETE =
  'mutation($i: CompleteCinderVolumeHostAttachmentInput!) { completeCinderVolumeHostAttachment(input: $i) { attachment { id } } }';
const ATTACH =
  'mutation($i: AttachVolumeInput!) { attachVolume(input: $i) { operation { id } attachment { id nativeId } } }';
const ATTACHMENTS =
  'query($id: ID!) { volume(id: $id) { attachments { id nativeId consumer { __typename ... on VolumeServerConsumer { serverId } } } } }';
const HOST_LIST = 'query($v: ID) { cinderHostAttachments(backend: "os", volumeId: $v) { nodes { id nativeId } } }';

describe("a Nova server's attachment used as a Cinder host attachment", () => {
  let os: OpenStackUnderTest;
  let gw: GatewayUnderTest;
  let auth: Record<string, string>;
  let server: string;
  let vid: string;
  let volumeId: string;
  /** The attachment as the volume lists it: gateway id (carrying the server id) and Cinder id. */
  let nova: { id: string; nativeId: string };
  /** Cinder requests other than reads (the writes a refusal must not make). */
  const cinderWrites = (): string[] =>
    os.sim
      .requests()
      .filter((r) => r.service === 'cinder' && r.method !== 'GET')
      .map((r) => `${r.method} ${r.path}`);
  const touching = (id: string): string[] =>
    os.sim
      .requests()
      .filter((r) => r.path.includes(`/attachments/${id}`))
      .map((r) => `${r.method} ${r.path}`);

  beforeAll(async () => {
    os = await startOpenStack({ delays: { attachMs: 20, detachMs: 20 } });
    gw = await startGatewayFor([os.backend('os')], { operationOptions: { pollMs: 20, maxPollMs: 50 } });
    auth = { 'x-auth-token': os.demoToken };
    server = os.sim.seedServer({ project: os.demo, name: 'app-1' });
    vid = os.sim.seedVolume({ project: os.demo, name: 'data', size: 1 });
    volumeId = (
      await gw.gql(
        'query($n: String!, $p: String) { volumeByNativeId(backend: "os", namespace: $p, nativeId: $n) { id } }',
        { n: vid, p: os.demo },
        auth,
      )
    ).body.data.volumeByNativeId.id;
    // Attached the way users do: through Nova, which makes the Cinder attachment itself.
    const attach = await gw.gql(ATTACH, { i: { volumeId, target: { server: { serverId: server } } } }, auth);
    expect(attach.body.errors).toBeUndefined();
    expect(await waitOperation(gw, attach.body.data.attachVolume.operation.id, auth)).toMatchObject({
      state: 'SUCCEEDED',
    });
    const listed = (await gw.gql(ATTACHMENTS, { id: volumeId }, auth)).body.data.volume.attachments;
    expect(listed).toEqual([
      {
        id: expect.any(String),
        nativeId: expect.any(String),
        consumer: { __typename: 'VolumeServerConsumer', serverId: server },
      },
    ]);
    nova = listed[0];
    expect(nova.nativeId).not.toBe(server);
  });
  beforeEach(() => os.sim.clearRequests());
  afterAll(disposeAll);

  const refusal = (res: { body: any }, argument: string, useMutation: string): void => {
    expect(res.body.data).toBeNull();
    expect(res.body.errors).toHaveLength(1);
    expect(res.body.errors[0].extensions).toEqual({
      code: 'BAD_USER_INPUT',
      retryable: false,
      argument,
      serverId: server,
      useMutation,
    });
    expect(res.body.errors[0].message).toContain(`use ${useMutation} with server ${server} instead`);
  };

  it('should refuse detachVolume by its gateway id, naming detachVolume with its server, with no call to /attachments/<server id> and no write', async () => {
    const res = await gw.gql(DETACH, { i: { volumeId, target: { host: { hostAttachmentId: nova.id } } } }, auth);
    refusal(res, 'input.target.host.hostAttachmentId', 'detachVolume');
    expect(touching(server)).toEqual([]);
    expect(cinderWrites()).toEqual([]);
    expect(os.sim.volume(vid)!.status).toBe('in-use');
  });

  it('should refuse the same attachment named by its Cinder id (which Cinder answers 409) before any write', async () => {
    const byCinderId = encodeGlobalId({
      kind: 'Attachment',
      backend: 'os',
      scope: os.demo,
      nativeId: vid,
      subId: nova.nativeId,
    });
    refusal(
      await gw.gql(DETACH, { i: { volumeId, target: { host: { hostAttachmentId: byCinderId } } } }, auth),
      'input.target.host.hostAttachmentId',
      'detachVolume',
    );
    expect(cinderWrites()).toEqual([]);
  });

  it('should refuse it from the host attachment list too, and in the update and complete mutations', async () => {
    const fromList = (await gw.gql(HOST_LIST, { v: volumeId }, auth)).body.data.cinderHostAttachments.nodes;
    expect(fromList).toEqual([{ id: nova.id, nativeId: nova.nativeId }]);
    refusal(
      await gw.gql(DETACH, { i: { volumeId, target: { host: { hostAttachmentId: fromList[0].id } } } }, auth),
      'input.target.host.hostAttachmentId',
      'detachVolume',
    );
    refusal(
      await gw.gql(UPDATE, { i: { attachmentId: nova.id, connector: { host: 'bm-1' } } }, auth),
      'input.attachmentId',
      'updateNovaVolumeAttachment',
    );
    refusal(
      await gw.gql(COMPLETE, { i: { attachmentId: nova.id } }, auth),
      'input.attachmentId',
      'updateNovaVolumeAttachment',
    );
    expect(touching(server)).toEqual([]);
    expect(cinderWrites()).toEqual([]);
  });

  it('should answer an attachment id the volume does not have with NOT_FOUND naming it, without writing', async () => {
    const gone = '0b7f9a0e-5d7e-4c1e-9d5b-2f6f3c1a9e11';
    const res = await gw.gql(
      DETACH,
      {
        i: {
          volumeId,
          target: {
            host: {
              hostAttachmentId: encodeGlobalId({
                kind: 'Attachment',
                backend: 'os',
                scope: os.demo,
                nativeId: vid,
                subId: gone,
              }),
            },
          },
        },
      },
      auth,
    );
    expect(res.body.errors[0].extensions).toMatchObject({ code: 'NOT_FOUND' });
    expect(res.body.errors[0].message).toContain(`has no attachment ${gone}`);
    expect(cinderWrites()).toEqual([]);
  });

  it('should still detach a host attachment by its id: DELETE /attachments/<its Cinder id>', async () => {
    const hostVid = os.sim.seedVolume({ project: os.demo, name: 'host-data', size: 1 });
    const hostVolume = (
      await gw.gql(
        'query($n: String!, $p: String) { volumeByNativeId(backend: "os", namespace: $p, nativeId: $n) { id } }',
        { n: hostVid, p: os.demo },
        auth,
      )
    ).body.data.volumeByNativeId.id;
    const attached = await gw.gql(
      ATTACH,
      {
        i: {
          volumeId: hostVolume,
          target: { host: { connector: { host: 'bm-7', initiator: 'iqn.1993-08.org.debian:01:bm7' } } },
        },
      },
      auth,
    );
    const host = attached.body.data.attachVolume.attachment;
    os.sim.clearRequests();
    const det = await gw.gql(
      DETACH,
      { i: { volumeId: hostVolume, target: { host: { hostAttachmentId: host.id } } } },
      auth,
    );
    expect(det.body.errors).toBeUndefined();
    expect(cinderWrites()).toEqual([`DELETE /v3/${os.demo}/attachments/${host.nativeId}`]);
  });

  it("simulator: a user deleting Nova's attachment directly gets Cinder's recorded 409 ConflictNovaUsingAttachment naming the server", async () => {
    const cinderUrl = os.sim.urls.cinderUrl;
    const res = await fetch(`${cinderUrl}/v3/${os.demo}/attachments/${nova.nativeId}`, {
      method: 'DELETE',
      headers: { 'x-auth-token': os.demoToken, 'openstack-api-version': 'volume 3.27' },
    });
    expect(res.status).toBe(409);
    expect(await res.json()).toEqual({
      conflictingRequest: {
        code: 409,
        message: `ConflictNovaUsingAttachment: Detach volume from instance ${server} using the Compute API`,
      },
    });
    expect(os.sim.volume(vid)!.status).toBe('in-use');
    // Nova's own detach still works.
    const det = await gw.gql(DETACH, { i: { volumeId, target: { server: { serverId: server } } } }, auth);
    expect(det.body.errors).toBeUndefined();
    expect(await waitOperation(gw, det.body.data.detachVolume.operation.id, auth)).toMatchObject({
      state: 'SUCCEEDED',
    });
  });
});
