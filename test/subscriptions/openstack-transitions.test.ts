/**
 * Item 7 of issue 17 (docs/reliability.md R7): one attach and one detach through the gateway,
 * against the OpenStack simulator over real HTTP, watched by a graphql-ws subscriber. Each real
 * transition is one event (docs/subscriptions.md, "One event per transition"): the gateway's own
 * ATTACHING/DETACHING on accept, the volume's status change and the watcher's ATTACHED/DETACHED;
 * Cinder's intermediate statuses (reserved, attaching, detaching) send nothing more. The
 * operation agrees with the events: RUNNING with Cinder's status while Nova works, and already
 * terminal when the event that says it is done arrives.
 */
import { disposeAll, OS, startGatewayFor, startOpenStack, type GatewayUnderTest, type OpenStackUnderTest } from '../support/harness';
import { until } from '../support/until';
import { ackedClient, subscribed, type RawClient } from '../ws/helpers';

const OP = 'operation { id state backendStatus }';
const ATTACH = `mutation($i: AttachVolumeInput!) { attachVolume(input: $i) { ${OP} } }`;
const DETACH = `mutation($i: DetachVolumeInput!) { detachVolume(input: $i) { ${OP} } }`;
const OPERATION = 'query($id: ID!) { volumeOperation(id: $id) { state backendStatus } }';
const SUB = `subscription($v: [ID!]) { volumeChanged(filter: { volumeIds: $v }) { type previousStatus volume { status backendStatus } attachment { state backendState } previousAttachmentState changedFields } }`;

let os: OpenStackUnderTest;
let gw: GatewayUnderTest;
let client: RawClient | undefined;

afterEach(async () => {
  client?.ws.close();
  client = undefined;
  await disposeAll();
});

it('sends one event per transition for one attach and one detach, and the operation is terminal when ATTACHED / DETACHED arrives', async () => {
  // Nova's steps slow enough that the watcher (every 100 ms while something moves) sees each Cinder status.
  os = await startOpenStack({ delays: { attachMs: 700, attachCompleteMs: 700, detachMs: 700 } });
  const server = os.sim.seedServer({ project: os.demo, name: 'app-1' });
  const vid = os.sim.seedVolume({ project: os.demo, name: 'data', size: 1 });
  gw = await startGatewayFor([os.backend('os', { auth: { method: 'password', username: OS.adminUser, password: OS.adminPassword, projectName: 'demo' }, watchFastMs: 100, watchSlowMs: 200 })]);
  const auth = { 'x-auth-token': os.demoToken };
  const id = (await gw.gql(`query($n: String!, $p: String) { volumeByNativeId(backend: "os", namespace: $p, nativeId: $n) { id } }`, { n: vid, p: os.demo }, auth)).body.data.volumeByNativeId.id;

  client = await ackedClient(gw.gateway.url.replace(/^http/, 'ws'), { 'X-Auth-Token': os.demoToken });
  await subscribed(client, 's', SUB, { v: [id] });
  const received: any[] = [];
  /** The operation as read over HTTP the moment each event arrived (in order). */
  const atEvent: Array<Promise<any>> = [];
  let operationId: string | null = null;
  client.ws.on('message', (d) => {
    const m = JSON.parse(String(d));
    if (m.id !== 's' || m.type !== 'next') return;
    const e = m.payload.data.volumeChanged;
    received.push(e);
    atEvent.push(operationId ? gw.gql(OPERATION, { id: operationId }, auth).then((r) => r.body.data.volumeOperation) : Promise.resolve(null));
  });

  // ---- attach
  const attached = await gw.gql(ATTACH, { i: { volumeId: id, target: { server: { serverId: server } } } }, auth);
  expect(attached.body.errors).toBeUndefined();
  operationId = attached.body.data.attachVolume.operation.id;
  const states: Array<{ state: string; backendStatus: string | null }> = [];
  // While Nova works: the operation is RUNNING with Cinder's status (polled until ATTACHED arrives).
  await until(async () => {
    states.push((await gw.gql(OPERATION, { id: operationId }, auth)).body.data.volumeOperation);
    return received.some((e) => e.type === 'ATTACHED');
  }, 'ATTACHED', 30_000, 50);
  const attachEvents = received.map((e) => e.type);
  const atAttached = await atEvent[attachEvents.indexOf('ATTACHED')];
  expect(states).toContainEqual({ state: 'RUNNING', backendStatus: expect.stringMatching(/^(reserved|attaching)$/) });
  expect(atAttached).toEqual({ state: 'SUCCEEDED', backendStatus: 'in-use' });
  expect(attachEvents).toEqual(['ATTACHING', 'STATUS_CHANGED', 'ATTACHED']);
  expect(received[1]).toMatchObject({ previousStatus: 'AVAILABLE', volume: { status: 'IN_USE' } });

  // ---- detach
  received.length = 0;
  atEvent.length = 0;
  const detached = await gw.gql(DETACH, { i: { volumeId: id, target: { server: { serverId: server } } } }, auth);
  expect(detached.body.errors).toBeUndefined();
  operationId = detached.body.data.detachVolume.operation.id;
  await until(() => received.some((e) => e.type === 'DETACHED'), 'DETACHED', 30_000);
  const detachEvents = received.map((e) => e.type);
  const atDetached = await atEvent[detachEvents.indexOf('DETACHED')];
  expect(atDetached).toMatchObject({ state: 'SUCCEEDED' });
  expect(detachEvents).toEqual(['DETACHING', 'STATUS_CHANGED', 'DETACHED']);
  expect(received[1]).toMatchObject({ previousStatus: 'IN_USE', volume: { status: 'AVAILABLE' } });
}, 90_000);
