/**
 * Item 7 of issue 17 (docs/reliability.md R7): one attach and one detach through the gateway,
 * against the OpenStack simulator over real HTTP, watched by a graphql-ws subscriber. Each real
 * transition is one event (docs/subscriptions.md, "One event per transition"): the gateway's own
 * ATTACHING/DETACHING on accept, the volume's status change and the watcher's ATTACHED/DETACHED;
 * Cinder's intermediate statuses (reserved, attaching, detaching) send nothing more. The
 * operation agrees with the events: RUNNING with Cinder's status while Nova works, and already
 * terminal when the event that says it is done arrives.
 */
import {
  demoVolumeId,
  disposeAll,
  startOpenStack,
  waitOperation,
  watchingGateway,
  type GatewayUnderTest,
  type OpenStackUnderTest,
} from '../support/harness';
import { until } from '../support/until';
import { ackedClient, subscribed, type RawClient } from '../ws/helpers';
import { messageText } from '../../server/ws/message-text';

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
  gw = await watchingGateway(os, { watchFastMs: 100, watchSlowMs: 200 });
  const auth = { 'x-auth-token': os.demoToken };
  const id = await demoVolumeId(gw, os, vid);

  client = await ackedClient(gw.gateway.url.replace(/^http/, 'ws'), { 'X-Auth-Token': os.demoToken });
  await subscribed(client, 's', SUB, { v: [id] });
  const received: any[] = [];
  /** The operation as read over HTTP the moment each event arrived (in order). */
  const atEvent: Array<Promise<any>> = [];
  let operationId: string | null = null;
  client.ws.on('message', (d) => {
    const m = JSON.parse(messageText(d));
    if (m.id !== 's' || m.type !== 'next') return;
    const e = m.payload.data.volumeChanged;
    received.push(e);
    atEvent.push(
      operationId
        ? gw.gql(OPERATION, { id: operationId }, auth).then((r) => r.body.data.volumeOperation)
        : Promise.resolve(null),
    );
  });

  // ---- attach
  const attached = await gw.gql(ATTACH, { i: { volumeId: id, target: { server: { serverId: server } } } }, auth);
  expect(attached.body.errors).toBeUndefined();
  operationId = attached.body.data.attachVolume.operation.id;
  const states: Array<{ state: string; backendStatus: string | null }> = [];
  // While Nova works: the operation is RUNNING with Cinder's status (polled until ATTACHED arrives).
  await until(
    async () => {
      states.push((await gw.gql(OPERATION, { id: operationId }, auth)).body.data.volumeOperation);
      return received.some((e) => e.type === 'ATTACHED');
    },
    'ATTACHED',
    30_000,
    50,
  );
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

/**
 * Issue 27 item 4 (docs/reliability.md R17): a tenant that leaves one of its own volumes reserved
 * through the gateway (`reserveCinderVolume`: Cinder's os-reserve, `attaching` until someone
 * unreserves it) holds the watcher's fast interval only for `watchTransitionWindowMs`; an attach the
 * gateway tracks keeps it fast until it is done, however long its steps outlast the window.
 */
it('keeps the watcher fast for a transition only within its window, and for a tracked attach until it is done', async () => {
  const WINDOW = 600;
  const SLOW = 3_000;
  // Nova's first attach step (volume `reserved`) outlasts the window three times over.
  os = await startOpenStack({ delays: { attachMs: 1_800, attachCompleteMs: 100 } });
  const server = os.sim.seedServer({ project: os.demo, name: 'app-1' });
  const held = os.sim.seedVolume({ project: os.demo, name: 'held', size: 1 });
  const data = os.sim.seedVolume({ project: os.demo, name: 'data', size: 1 });
  gw = await watchingGateway(os, { watchFastMs: 50, watchSlowMs: SLOW, watchTransitionWindowMs: WINDOW });
  const auth = { 'x-auth-token': os.demoToken };
  const heldId = await demoVolumeId(gw, os, held);
  const dataId = await demoVolumeId(gw, os, data);
  /** When the watcher read the all-projects volume list (ms since the epoch), from the simulator's own log. */
  const listReads = (): number[] =>
    (
      os.sim.requests() as Array<{
        service: string;
        method: string;
        path: string;
        params: Record<string, string[]>;
        time: string;
      }>
    )
      .filter(
        (r) =>
          r.service === 'cinder' && r.method === 'GET' && r.path.endsWith('/volumes/detail') && r.params.all_tenants,
      )
      .map((r) => Date.parse(r.time));
  const readsBetween = (from: number, to: number): number => listReads().filter((t) => t >= from && t < to).length;

  client = await ackedClient(gw.gateway.url.replace(/^http/, 'ws'), { 'X-Auth-Token': os.demoToken });
  await subscribed(client, 's', SUB, { v: [heldId, dataId] });
  const received: Array<{ type: string; volume: { backendStatus: string }; at: number }> = [];
  client.ws.on('message', (d) => {
    const m = JSON.parse(messageText(d));
    if (m.id === 's' && m.type === 'next') received.push({ ...m.payload.data.volumeChanged, at: Date.now() });
  });

  // ---- the tenant reserves its own volume through the gateway and leaves it so
  const reserved = await gw.gql(
    'mutation($id: ID!) { reserveCinderVolume(input: { volumeId: $id }) { volume { backendStatus } operation { state } } }',
    { id: heldId },
    auth,
  );
  expect(reserved.body.errors).toBeUndefined();
  expect(reserved.body.data.reserveCinderVolume).toEqual({
    volume: { backendStatus: 'attaching' },
    operation: { state: 'SUCCEEDED' },
  });
  // The watcher finds it at its next poll (a slow one: Cinder's synchronous actions nudge nothing).
  await until(() => received.some((e) => e.volume.backendStatus === 'attaching'), 'the reserve seen', 30_000);
  const seenAt = received.find((e) => e.volume.backendStatus === 'attaching')!.at;
  await until(() => Date.now() >= seenAt + WINDOW + 500, 'past the window', 30_000);
  const quietFrom = Date.now();
  await until(() => Date.now() >= quietFrom + 1_500, 'a quiet span', 30_000);
  // Before the window: a read every 50 ms for as long as the volume stayed reserved (about 30 here).
  expect(readsBetween(quietFrom, quietFrom + 1_500)).toBeLessThanOrEqual(1);

  // ---- an attach the gateway tracks: fast until it is done, though `held` still holds nothing fast
  const attachedAt = Date.now();
  const attached = await gw.gql(ATTACH, { i: { volumeId: dataId, target: { server: { serverId: server } } } }, auth);
  expect(attached.body.errors).toBeUndefined();
  await until(() => received.some((e) => e.type === 'ATTACHED'), 'ATTACHED', 30_000);
  const doneAt = received.find((e) => e.type === 'ATTACHED')!.at;
  expect(doneAt - attachedAt).toBeGreaterThan(1_500); // the step outlasted the window
  // Past the window of the attach's first status, while the operation was still pending: polled at
  // 50 ms (a watcher at its 3 s slow interval would have read once at most).
  const pending = readsBetween(attachedAt + WINDOW + 200, doneAt - 100);
  expect(pending).toBeGreaterThanOrEqual(5);
  expect((await waitOperation(gw, attached.body.data.attachVolume.operation.id, auth)).state).toBe('SUCCEEDED');

  // ---- done, and `held` still reserved: back to the slow interval
  await until(() => Date.now() >= doneAt + WINDOW + 500, 'past the last window', 30_000);
  const after = Date.now();
  await until(() => Date.now() >= after + 1_500, 'a quiet span', 30_000);
  expect(readsBetween(after, after + 1_500)).toBeLessThanOrEqual(1);
  expect(
    (await gw.gql('query($id: ID!) { volume(id: $id) { backendStatus } }', { id: heldId }, auth)).body.data.volume
      .backendStatus,
  ).toBe('attaching');
}, 90_000);
