/**
 * Item 6 of issue 17 (docs/reliability.md R6): a Nomad restart with unchanged state must not
 * show as changes. The simulator runs as a child process seeded with the demo cluster (fixed ids;
 * the same writes in the same order give the same raft indexes, as a restarted Nomad replays its
 * persisted raft log). It is SIGKILLed and started again; the gateway's watcher reconnects and
 * resyncs. Subscribers get nothing for the unchanged volumes and claims, and a real change made
 * after the restart still arrives. A Nomad that lost writes (its raft indexes went back) shows its
 * real differences, and only those. One claim release seen by a watcher on the event stream and by
 * one on blocking queries is the same sequence (issue 27 item 8, docs/reliability.md R21).
 */
import { disposeAll, startGatewayFor, type GatewayUnderTest } from '../support/harness';
import { killSimProcesses, startNomadProcess, type SimProcess } from '../support/sim-process';
import { until } from '../support/until';
import { ackedClient, subscribed, type RawClient } from '../ws/helpers';
import { messageText } from '../../server/ws/message-text';

const TOKEN = 'demo-east-management';
const SUB =
  'subscription { volumeChanged { type volume { ref: id name } attachment { consumerId: id state } changedFields } }';

let sim: SimProcess;
let gw: GatewayUnderTest;
const clients: RawClient[] = [];

afterEach(async () => {
  for (const c of clients.splice(0)) c.ws.close();
  await disposeAll();
  await killSimProcesses();
});

/** Registers a volume through the simulator's control API (one raft write). */
async function seed(id: string, name: string, externalId = `vol-${id}`): Promise<void> {
  const body = {
    ID: id,
    Name: name,
    PluginID: 'aws-ebs0',
    ExternalID: externalId,
    Capacity: 50 * 2 ** 30,
    RequestedCapacityMin: 50 * 2 ** 30,
  };
  const res = await fetch(`${sim.url}/_sim/volumes`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  expect(res.status).toBe(200);
}

/** A `volumeChanged` subscriber over graphql-ws; returns the events it receives after SUBSCRIBED. */
async function subscriber(g: GatewayUnderTest = gw): Promise<any[]> {
  const client = await ackedClient(g.gateway.url.replace(/^http/, 'ws'), { 'X-Nomad-Token': TOKEN });
  clients.push(client);
  await subscribed(client, 's', SUB);
  const received: any[] = [];
  client.ws.on('message', (d) => {
    const m = JSON.parse(messageText(d));
    if (m.id === 's' && m.type === 'next') received.push(m.payload.data.volumeChanged);
  });
  return received;
}

/** SIGKILL, wait for the watcher to notice, start again, wait for its resync. */
async function crashAndRestart(): Promise<void> {
  await sim.kill();
  await until(async () => (await watcherState()) !== 'STREAMING', 'the watcher to notice the crash', 30_000);
  await sim.restart();
  await until(async () => (await watcherState()) === 'STREAMING', 'the watcher to resync', 60_000);
}

/** The watcher's state as `/metrics` reports it. */
async function watcherState(g: GatewayUnderTest = gw): Promise<string | undefined> {
  const text = await (await fetch(g.gateway.url.replace('/graphql', '/metrics'))).text();
  return /^gateway_live_watcher_state\{backend="east",state="(\w+)"\} 1$/m.exec(text)?.[1];
}

it('sends no event for unchanged volumes and claims after Nomad is killed and restarted with the same state; a later real change still arrives', async () => {
  sim = await startNomadProcess('east');
  gw = await startGatewayFor([{ id: 'east', url: sim.url, token: TOKEN }]);
  await until(async () => (await watcherState()) === 'STREAMING', 'the watcher to stream', 30_000);
  const received = await subscriber();
  await crashAndRestart();

  // A real change after the restart: a new allocation claims `uploads`, which had no claim.
  const placed = await fetch(`${sim.url}/_sim/allocations`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      jobId: 'uploader',
      nodeId: 'e0000000-0000-4000-8000-000000000001',
      volumes: [{ volumeId: 'uploads', mode: 'write' }],
    }),
  });
  expect(placed.status).toBe(200);
  await until(() => received.some((e) => e.type === 'CLAIMED'), 'the new claim', 30_000);
  // Everything received concerns `uploads`: nothing for the unchanged volumes and claims.
  expect(received.filter((e) => e.volume.name !== 'user uploads')).toEqual([]);
  expect(received.map((e) => e.type).sort()).toEqual(['CLAIMED', 'STATUS_CHANGED']);
}, 120_000);

it('shows what a Nomad that lost its writes (its indexes went back) really changed, and nothing else', async () => {
  sim = await startNomadProcess('east');
  gw = await startGatewayFor([{ id: 'east', url: sim.url, token: TOKEN }]);
  await until(async () => (await watcherState()) === 'STREAMING', 'the watcher to stream', 30_000);
  const received = await subscriber();
  // A write past the demo seed: `uploads` renamed, at an index the restarted Nomad will not reach.
  await seed('uploads', 'uploads renamed', 'vol-0e45000000000a003');
  await until(() => received.some((e) => e.volume.name === 'uploads renamed'), 'the rename', 30_000);
  received.length = 0;
  await crashAndRestart();
  // The restarted Nomad has the demo seed only: `uploads` has its old name again, at a lower index.
  await seed('sentinel', 'sentinel');
  await until(() => received.some((e) => e.volume.name === 'sentinel'), 'the volume created after the restart', 30_000);
  expect(received.map((e) => `${e.type} ${e.volume.name}`)).toEqual(['UPDATED user uploads', 'CREATED sentinel']);
}, 120_000);

it('sends one claim release as DETACHING, STATUS_CHANGED, RELEASED both from the event stream and from blocking queries', async () => {
  sim = await startNomadProcess('east');
  gw = await startGatewayFor([{ id: 'east', url: sim.url, token: TOKEN }]);
  await until(async () => (await watcherState()) === 'STREAMING', 'the first watcher to stream', 30_000);
  // The next two stream requests are refused (both topics, then CSIVolume alone), as an ACL that
  // denies the event stream does: the second gateway's watcher follows blocking queries.
  const denied = await fetch(`${sim.url}/_sim/fail-next`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ count: 2, status: 403, body: 'Permission denied', pathPrefix: '/v1/event/stream' }),
  });
  expect(denied.status).toBe(200);
  const polling = await startGatewayFor([{ id: 'east', url: sim.url, token: TOKEN }]);
  await until(
    async () => (await watcherState(polling)) === 'POLLING',
    'the second watcher on blocking queries',
    30_000,
  );
  const streamed = await subscriber();
  const polled = await subscriber(polling);

  const placed = await fetch(`${sim.url}/_sim/allocations`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      jobId: 'uploader',
      nodeId: 'e0000000-0000-4000-8000-000000000001',
      volumes: [{ volumeId: 'uploads', mode: 'write' }],
    }),
  });
  expect(placed.status).toBe(200);
  const alloc = ((await placed.json()) as { id: string }).id;
  await until(
    () => streamed.some((e) => e.type === 'CLAIMED') && polled.some((e) => e.type === 'CLAIMED'),
    'the claim on both',
    30_000,
  );
  streamed.length = 0;
  polled.length = 0;
  // The allocation stops: Nomad releases its claim (node-detached past claim, then freed).
  const stopped = await fetch(`${sim.url}/_sim/allocations/${alloc}/status`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ clientStatus: 'complete', desiredStatus: 'stop' }),
  });
  expect(stopped.status).toBe(200);
  await until(
    () => streamed.some((e) => e.type === 'RELEASED') && polled.some((e) => e.type === 'RELEASED'),
    'the release on both',
    30_000,
  );
  const sequence = (events: any[]): string[] =>
    events
      .filter((e) => e.volume.name === 'user uploads')
      .map((e) => `${e.type}${e.attachment ? ` ${e.attachment.state}` : ''}`);
  expect(sequence(streamed)).toEqual(['DETACHING DETACHING', 'STATUS_CHANGED', 'RELEASED DETACHED']);
  expect(sequence(polled)).toEqual(sequence(streamed));
}, 120_000);
