/** operationUpdated through the hub: authorized like volumeOperation, current state first, completes when terminal. */
import { disposeAll, startOpenStack, type OpenStackUnderTest } from '../support/harness';
import { events, startLive, until, type LiveUnderTest } from './live-helpers';

let os: OpenStackUnderTest;
let live: LiveUnderTest | undefined;

beforeEach(async () => {
  os = await startOpenStack({ delays: { attachMs: 300 } });
});

afterEach(async () => {
  await live?.stop();
  live = undefined;
  await disposeAll();
});

const gid = (project: string, id: string): string =>
  Buffer.from(JSON.stringify(['Volume', 'os', project, id])).toString('base64url');
const OP = `subscription($id: ID!) { operationUpdated(id: $id) { id kind state } }`;

it('yields the current state, then each change, and completes after the terminal one; strangers get NOT_FOUND', async () => {
  const server = os.sim.seedServer({ project: os.demo, name: 'app-1' });
  const vid = os.sim.seedVolume({ project: os.demo, name: 'data', size: 1 });
  live = await startLive([os.backend('os')]);
  const res = await live.run(
    `mutation($i: AttachVolumeInput!) { attachVolume(input: $i) { operation { id state } } }`,
    { i: { volumeId: gid(os.demo, vid), target: { server: { serverId: server } } } },
    { os: os.demoToken },
  );
  const id = res.data.attachVolume.operation.id;
  const stranger = await live.subscribe(OP, { id }, { os: os.otherToken });
  expect(stranger.refused.errors[0].extensions.code).toBe('NOT_FOUND');
  const s = await live.subscribe(OP, { id }, { os: os.demoToken });
  expect(live.hub.counts().operationUpdated).toBe(1);
  await until(() => s.done, 'the stream to complete', 20_000);
  const states = events(s, 'operationUpdated').map((o) => o.state);
  expect(['PENDING', 'RUNNING']).toContain(states[0]);
  expect(states.at(-1)).toBe('SUCCEEDED');
  expect(live.hub.counts().operationUpdated).toBe(0);
});
