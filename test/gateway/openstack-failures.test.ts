/**
 * Failure as soon as the backend knows (issue 10, item 7), through GraphQL against the OpenStack
 * simulator: a detach that Nova fails in its compute service (nova-26/06) and an attach that Nova
 * rolls back end FAILED at once, from Nova's instance action for the request, not at the 120 s
 * deadline. The reason names the failed step and Nova's request id; a member never sees a
 * traceback, an admin also gets the exception's name. Afterwards the volume follows Cinder, and
 * the attachment Nova still lists is ERROR, naming the split. The gateway runs with its default
 * polling; the request id is read back from Nova itself, not from the gateway.
 */
import {
  disposeAll,
  startGatewayFor,
  startOpenStack,
  type GatewayUnderTest,
  type OpenStackUnderTest,
} from '../support/harness';
import { isTerminal, settle } from '../support/until';

/** The production deadline: the failure must come long before it. */
const DEADLINE_MS = 120_000;
/** A generous bound for "at once" on a loaded machine. */
const SOON_MS = 10_000;
const OP = 'id kind state backendStatus failureReason createdAt deadlineAt';
const ATTACH = `mutation($i: AttachVolumeInput!) { attachVolume(input: $i) { operation { ${OP} } } }`;
const DETACH = `mutation($i: DetachVolumeInput!) { detachVolume(input: $i) { operation { ${OP} } } }`;
const SERVER_ATTACHMENTS = `query($s: ID!) { serverVolumeAttachments(serverId: $s) { id state stateReason backendState device volume { nativeId } consumer { ... on VolumeServerConsumer { serverId } } } }`;
/** What a traceback or its frames look like (nova-26/06 and the simulator's reconstruction). */
const TRACEBACK = /Traceback|File "|\.py\b|line \d+|dist-packages|excutils/;

/** Polls `volumeOperation(id)` until it is terminal or `timeoutMs` passed; returns it and how long that took. */
async function follow(
  gw: GatewayUnderTest,
  id: string,
  headers: Record<string, string>,
  timeoutMs = SOON_MS,
): Promise<{ op: any; ms: number }> {
  const start = Date.now();
  const read = async (): Promise<any> => {
    const res = await gw.gql(
      `query($id: ID!) { volumeOperation(id: $id) { ${OP} target { ... on Volume { status backendStatus } } } }`,
      { id },
      headers,
    );
    const op = res.body.data?.volumeOperation;
    if (!op) throw new Error(`operation ${id} not readable: ${JSON.stringify(res.body)}`);
    return op;
  };
  const op = await settle(read, isTerminal, timeoutMs, 50);
  return { op, ms: Date.now() - start };
}

/** Nova's own record of the server's newest action named `action`, read directly as an admin at `microversion`: its request id and events. */
async function novaAction(
  os: OpenStackUnderTest,
  server: string,
  action: string,
  microversion = '2.93',
): Promise<{ requestId: string; message: string | null; events: Array<{ event: string; result: string | null }> }> {
  const headers = { 'x-auth-token': os.adminToken, 'openstack-api-version': `compute ${microversion}` };
  const base = `${os.sim.urls.novaUrl}/v2.1/servers/${server}/os-instance-actions`;
  const list = (await (await fetch(base, { headers })).json()) as {
    instanceActions: Array<{ action: string; request_id: string }>;
  };
  const found = list.instanceActions.find((a) => a.action === action);
  if (!found) throw new Error(`no ${action} action on server ${server}`);
  const detail = (await (await fetch(`${base}/${found.request_id}`, { headers })).json()) as {
    instanceAction: { message: string | null; events: Array<{ event: string; result: string | null }> };
  };
  return { requestId: found.request_id, message: detail.instanceAction.message, events: detail.instanceAction.events };
}

describe('OpenStack failures reported as soon as Nova knows', () => {
  let os: OpenStackUnderTest;
  let gw: GatewayUnderTest;
  let server: string;
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

  /** Seeds a volume, attaches it to the server through the gateway and waits for SUCCEEDED. */
  async function attached(name: string, headers: Record<string, string>): Promise<{ vid: string; id: string }> {
    const vid = os.sim.seedVolume({ project: os.demo, name, size: 1 });
    const id = await gid(vid);
    const res = await gw.gql(ATTACH, { i: { volumeId: id, target: { server: { serverId: server } } } }, headers);
    expect(res.body.errors).toBeUndefined();
    expect((await follow(gw, res.body.data.attachVolume.operation.id, headers)).op).toMatchObject({
      state: 'SUCCEEDED',
      backendStatus: 'in-use',
    });
    return { vid, id };
  }

  /** Starts a detach through the gateway; checks it was accepted with the 120 s deadline. */
  async function detach(
    id: string,
    headers: Record<string, string>,
  ): Promise<{ operationId: string; startedAt: number }> {
    const startedAt = Date.now();
    const res = await gw.gql(DETACH, { i: { volumeId: id, target: { server: { serverId: server } } } }, headers);
    expect(res.body.errors).toBeUndefined();
    const op = res.body.data.detachVolume.operation;
    expect(op).toMatchObject({ kind: 'DETACH_VOLUME', state: expect.stringMatching(/^(PENDING|RUNNING)$/) });
    expect(Date.parse(op.deadlineAt) - Date.parse(op.createdAt)).toBe(DEADLINE_MS);
    return { operationId: op.id, startedAt };
  }

  beforeEach(async () => {
    // The simulator's measured delays and the gateway's default polling (250 ms, backing off to 2 s).
    os = await startOpenStack();
    server = os.sim.seedServer({ project: os.demo, name: 'app-1' });
    gw = await startGatewayFor([os.backend('os', { operationTimeoutMs: DEADLINE_MS })]);
    member = { 'x-auth-token': os.demoToken };
    admin = { 'x-auth-token': os.adminToken };
  });
  afterEach(disposeAll);

  it('should end a detach that Nova failed in compute FAILED at once, naming compute_detach_volume and the request id, without a traceback for a member', async () => {
    const { vid, id } = await attached('data', member);
    os.sim.failNextDetach(vid);
    const { operationId, startedAt } = await detach(id, member);
    const { op } = await follow(gw, operationId, member);
    expect(op.state).toBe('FAILED');
    expect(Date.now() - startedAt).toBeLessThan(SOON_MS);
    const nova = await novaAction(os, server, 'detach_volume');
    expect(nova).toMatchObject({ message: 'Error', events: [{ event: 'compute_detach_volume', result: 'Error' }] });
    expect(op.failureReason).toContain('compute_detach_volume');
    expect(op.failureReason).toContain(nova.requestId);
    // A member's events carry no traceback and no details: neither reaches the reason.
    expect(op.failureReason).not.toMatch(TRACEBACK);
    expect(op.failureReason).not.toContain('AttributeError');
    expect(op.backendStatus).toBe('available');
  });

  it('should give an admin the exception name from the event details, never the traceback', async () => {
    const { vid, id } = await attached('data', admin);
    os.sim.failNextDetach(vid);
    const { operationId, startedAt } = await detach(id, admin);
    const { op } = await follow(gw, operationId, admin);
    expect(op.state).toBe('FAILED');
    expect(Date.now() - startedAt).toBeLessThan(SOON_MS);
    const { requestId } = await novaAction(os, server, 'detach_volume');
    expect(op.failureReason).toContain('compute_detach_volume');
    expect(op.failureReason).toContain(requestId);
    expect(op.failureReason).toContain('AttributeError');
    expect(op.failureReason).not.toMatch(TRACEBACK);
    expect(op.failureReason.length).toBeLessThan(600);
  });

  it('should then show the volume as Cinder does, and the attachment Nova still lists as ERROR naming the split', async () => {
    const { vid, id } = await attached('data', member);
    const before = await gw.gql(SERVER_ATTACHMENTS, { s: server }, member);
    expect(before.body.data.serverVolumeAttachments).toEqual([
      expect.objectContaining({ state: 'ATTACHED', stateReason: null, volume: { nativeId: vid } }),
    ]);
    os.sim.failNextDetach(vid);
    const { operationId } = await detach(id, member);
    const { op } = await follow(gw, operationId, member);
    expect(op.state).toBe('FAILED');
    // The operation's target and a volume read agree, and both follow Cinder.
    expect(op.target).toEqual({ status: 'AVAILABLE', backendStatus: 'available' });
    const volume = await gw.gql(
      `query($id: ID!) { volume(id: $id) { status backendStatus attachments { id } } }`,
      { id },
      member,
    );
    expect(volume.body).toEqual({
      data: { volume: { status: 'AVAILABLE', backendStatus: 'available', attachments: [] } },
    });
    const after = await gw.gql(SERVER_ATTACHMENTS, { s: server }, member);
    expect(after.body.errors).toBeUndefined();
    expect(after.body.data.serverVolumeAttachments).toEqual([
      expect.objectContaining({
        id: before.body.data.serverVolumeAttachments[0].id,
        state: 'ERROR',
        volume: { nativeId: vid },
        consumer: { serverId: server },
      }),
    ]);
    const reason = after.body.data.serverVolumeAttachments[0].stateReason;
    // It names the split: Nova lists the attachment, Cinder does not.
    expect(reason).toMatch(/Nova/);
    expect(reason).toMatch(/Cinder/);
    expect(reason).toContain(vid);
    expect(reason).toContain(server);
  });

  it("should end an attach that Nova rolled back FAILED at once, naming compute_attach_volume, the request id and Cinder's message", async () => {
    const vid = os.sim.seedVolume({ project: os.demo, name: 'flaky', size: 1 });
    const id = await gid(vid);
    os.sim.failNextAttach(vid);
    const startedAt = Date.now();
    const res = await gw.gql(ATTACH, { i: { volumeId: id, target: { server: { serverId: server } } } }, member);
    expect(res.body.errors).toBeUndefined();
    const { op } = await follow(gw, res.body.data.attachVolume.operation.id, member);
    expect(op).toMatchObject({ kind: 'ATTACH_VOLUME', state: 'FAILED', backendStatus: 'available' });
    expect(Date.now() - startedAt).toBeLessThan(SOON_MS);
    const nova = await novaAction(os, server, 'attach_volume');
    expect(nova).toMatchObject({ message: 'Error', events: [{ event: 'compute_attach_volume', result: 'Error' }] });
    expect(op.failureReason).toContain('compute_attach_volume');
    expect(op.failureReason).toContain(nova.requestId);
    // Cinder's user message for the failed attachment update (VOLUME_VOLUME_004_001).
    expect(op.failureReason).toContain('An unknown error occurred');
    expect(op.failureReason).not.toMatch(TRACEBACK);
    // The rollback left nothing behind: the volume is available and Nova lists nothing.
    expect(
      (await gw.gql(`query($id: ID!) { volume(id: $id) { status attachments { id } } }`, { id }, member)).body.data
        .volume,
    ).toEqual({ status: 'AVAILABLE', attachments: [] });
    expect((await gw.gql(SERVER_ATTACHMENTS, { s: server }, member)).body.data.serverVolumeAttachments).toEqual([]);
  });
});

describe('OpenStack failures below compute 2.51, where a member sees no events', () => {
  afterEach(disposeAll);

  it("should still end the failed detach FAILED at once from the action's message, naming the request id", async () => {
    const os = await startOpenStack({ novaMaxVersion: '2.50' });
    const server = os.sim.seedServer({ project: os.demo, name: 'old' });
    const vid = os.sim.seedVolume({ project: os.demo, name: 'data', size: 1 });
    os.sim.attachNow(server, vid);
    const gw = await startGatewayFor([os.backend('os', { operationTimeoutMs: DEADLINE_MS })]);
    const member = { 'x-auth-token': os.demoToken };
    const id = (
      await gw.gql(
        `query($n: String!, $p: String) { volumeByNativeId(backend: "os", namespace: $p, nativeId: $n) { id } }`,
        { n: vid, p: os.demo },
        member,
      )
    ).body.data.volumeByNativeId.id;
    os.sim.failNextDetach(vid);
    const startedAt = Date.now();
    const res = await gw.gql(DETACH, { i: { volumeId: id, target: { server: { serverId: server } } } }, member);
    expect(res.body.errors).toBeUndefined();
    const { op } = await follow(gw, res.body.data.detachVolume.operation.id, member);
    expect(op.state).toBe('FAILED');
    expect(Date.now() - startedAt).toBeLessThan(SOON_MS);
    const { requestId } = await novaAction(os, server, 'detach_volume', '2.50');
    expect(op.failureReason).toContain(requestId);
    expect(op.failureReason).not.toMatch(TRACEBACK);
  });
});
