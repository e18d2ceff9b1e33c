/**
 * Events resolve what queries resolve, on OpenStack (docs/subscriptions.md, "Fields the view
 * lacks"): an attach through the gateway, watched over graphql-ws with the caller's Keystone token.
 * The attachment events show the Nova server's `name` and `status` (read from Nova with the
 * subscriber's token), and `operationUpdated`'s `target` is the volume as it is after the change:
 * on SUCCEEDED it is in use and lists the attachment.
 */
import { demoVolumeId, disposeAll, startOpenStack, watchingGateway } from '../support/harness';
import { until } from '../support/until';
import { messageText } from '../../server/ws/message-text';
import { ackedClient, subscribed, type RawClient } from './helpers';

const ATTACH = `mutation($i: AttachVolumeInput!) { attachVolume(input: $i) { operation { id state } } }`;
const CONSUMER = '... on VolumeServerConsumer { serverId name status }';
const WATCH = `subscription($v: ID) { attachmentChanged(target: { volume: $v }) {
  type attachment { state consumer { ${CONSUMER} } } volume { name status }
} }`;
const FOLLOW = `subscription($id: ID!) { operationUpdated(id: $id) {
  state target { ... on Volume { name status attachments { state consumer { ${CONSUMER} } } } }
} }`;

let client: RawClient | undefined;

afterEach(async () => {
  // The socket goes before the gateway stops.
  client?.ws.close();
  await disposeAll();
});

/** Every `next` payload of the socket's subscriptions, by id, as they arrive. */
function payloads(c: RawClient): Map<string, any[]> {
  const out = new Map<string, any[]>();
  c.ws.on('message', (d) => {
    const m = JSON.parse(messageText(d));
    if (m.type === 'next') out.set(m.id, [...(out.get(m.id) ?? []), m.payload]);
  });
  return out;
}

it("shows the Nova server's name and status in attachment events, and operationUpdated's target as it is after the attach", async () => {
  const os = await startOpenStack({ delays: { attachMs: 300, attachCompleteMs: 200 } });
  const server = os.sim.seedServer({ project: os.demo, name: 'app-1' });
  const vid = os.sim.seedVolume({ project: os.demo, name: 'data', size: 1 });
  const gw = await watchingGateway(os, { watchFastMs: 100, watchSlowMs: 200 });
  const auth = { 'x-auth-token': os.demoToken };
  const id = await demoVolumeId(gw, os, vid);

  client = await ackedClient(gw.gateway.url.replace(/^http/, 'ws'), { 'X-Auth-Token': os.demoToken });
  await subscribed(client, 'w', WATCH, { v: id }, 'attachmentChanged');
  const received = payloads(client);
  const attached = await gw.gql(ATTACH, { i: { volumeId: id, target: { server: { serverId: server } } } }, auth);
  expect(attached.body.errors).toBeUndefined();
  client.send({
    id: 'op',
    type: 'subscribe',
    payload: { query: FOLLOW, variables: { id: attached.body.data.attachVolume.operation.id } },
  });

  const events = (): any[] => received.get('w') ?? [];
  const states = (): any[] => received.get('op') ?? [];
  await until(
    () =>
      events().some((p) => p.data?.attachmentChanged?.type === 'ATTACHED') &&
      states().some((p) => p.data?.operationUpdated?.state === 'SUCCEEDED'),
    'ATTACHED and SUCCEEDED',
    30_000,
  );

  // Every event, ATTACHING included, names the server as Nova shows it to the subscriber.
  expect(events().flatMap((p) => p.errors ?? [])).toEqual([]);
  const consumer = { serverId: server, name: 'app-1', status: 'ACTIVE' };
  expect(events().find((p) => p.data.attachmentChanged.type === 'ATTACHED').data.attachmentChanged).toMatchObject({
    attachment: { state: 'ATTACHED', consumer },
    volume: { name: 'data', status: 'IN_USE' },
  });
  expect(events().find((p) => p.data.attachmentChanged.type === 'ATTACHING').data.attachmentChanged).toMatchObject({
    attachment: { consumer },
  });

  // The operation's target on SUCCEEDED is the volume after the attach, read with the subscriber's token.
  expect(states().flatMap((p) => p.errors ?? [])).toEqual([]);
  const done = states().find((p) => p.data.operationUpdated.state === 'SUCCEEDED').data.operationUpdated;
  expect(done.target).toEqual({
    name: 'data',
    status: 'IN_USE',
    attachments: [{ state: 'ATTACHED', consumer }],
  });
});
