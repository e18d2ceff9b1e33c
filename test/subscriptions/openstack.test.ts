/**
 * The live hub over a real OpenStack simulator: the gateway emits ATTACHING as soon as it accepts
 * an attach (through the real attachVolume resolver), the watcher then confirms ATTACHED; and a
 * subscriber whose Keystone token expires is ended with UNAUTHENTICATED within the access TTL.
 */
import {
  disposeAll,
  MGMT,
  OS,
  seedVolumes,
  startNomad,
  startOpenStack,
  type OpenStackUnderTest,
} from '../support/harness';
import { events, startLive, until, type LiveUnderTest } from './live-helpers';

const ATTACH = `mutation($i: AttachVolumeInput!) { attachVolume(input: $i) { operation { id state } } }`;
const CHANGES = `subscription { volumeChanged { type cursor volume { name } attachment { state consumer { ... on VolumeServerConsumer { serverId } } } previousAttachmentState } }`;

let os: OpenStackUnderTest;
let live: LiveUnderTest | undefined;

beforeEach(async () => {
  os = await startOpenStack({ delays: { attachMs: 300, detachMs: 60, createMs: 60 } });
});

afterEach(async () => {
  await live?.stop();
  live = undefined;
  await disposeAll();
});

/** The backend with the admin's service credential (every project) and a quick watcher. */
const watched = () =>
  os.backend('os', {
    auth: { method: 'password', username: OS.adminUser, password: OS.adminPassword, projectName: 'demo' },
    watchFastMs: 50,
    watchSlowMs: 100,
  });
const gid = (backend: string, project: string, id: string): string =>
  Buffer.from(JSON.stringify(['Volume', backend, project, id])).toString('base64url');

it('shows an accepted attach as ATTACHING at once, then ATTACHED from the watcher', async () => {
  const server = os.sim.seedServer({ project: os.demo, name: 'app-1' });
  const vid = os.sim.seedVolume({ project: os.demo, name: 'data', size: 1 });
  live = await startLive([watched()]);
  const s = await live.subscribe(
    `subscription($s: ID) { attachmentChanged(target: { server: $s }) { type attachment { state } } }`,
    { s: server },
    { os: os.demoToken },
  );
  // The first subscriber wakes the idle watcher; its first full read has the volume.
  await live.watcherCurrent('os');
  expect(live.hub.watcher('os')!.status().volumes).toBe(1);
  const res = await live.run(
    ATTACH,
    { i: { volumeId: gid('os', os.demo, vid), target: { server: { serverId: server } } } },
    { os: os.demoToken },
  );
  expect(res.errors).toBeUndefined();
  await until(() => events(s, 'attachmentChanged').some((e) => e.type === 'ATTACHED'), 'ATTACHED', 20_000);
  const types = events(s, 'attachmentChanged').map((e) => e.type);
  expect(types[0]).toBe('SUBSCRIBED');
  expect(types.indexOf('ATTACHING')).toBeGreaterThan(0);
  expect(types.indexOf('ATTACHING')).toBeLessThan(types.indexOf('ATTACHED'));
});

it('ends a subscription whose Keystone token expired with UNAUTHENTICATED, within the access TTL', async () => {
  const ttl = 300;
  live = await startLive([watched()], { hub: { accessTtlMs: ttl } });
  const token = os.sim.issueToken({ user: 'demo', project: 'demo' });
  const s = await live.subscribe(CHANGES, {}, { os: token });
  await live.watcherCurrent('os');
  os.sim.seedVolume({ project: os.demo, name: 'first', size: 1 });
  await until(() => events(s).some((e) => e.volume?.name === 'first'), 'the first volume');
  os.sim.expireToken(token);
  await new Promise((r) => setTimeout(r, ttl + 100));
  os.sim.seedVolume({ project: os.demo, name: 'second', size: 1 });
  await until(() => s.done, 'the subscription to end');
  const last = s.results.at(-1);
  expect(last.errors[0].extensions.code).toBe('UNAUTHENTICATED');
  expect(events(s).some((e) => e.volume?.name === 'second')).toBe(false);
  expect(live.hub.counts().volumeChanged).toBe(0);
});

it("keeps a subscription that carries no Keystone token: SUBSCRIBED says NO_CREDENTIAL, OpenStack changes pass it by, other backends' still arrive", async () => {
  const nomad = await startNomad();
  live = await startLive([watched(), { id: 'east', url: nomad.url, token: MGMT }]);
  const doc = `subscription { volumeChanged { type volume { name } omittedBackends { backend { id } reason message } } }`;
  const nomadOnly = await live.subscribe(doc, {}, { east: MGMT });
  const both = await live.subscribe(doc, {}, { east: MGMT, os: os.demoToken });
  await until(() => nomadOnly.results.length === 1 && both.results.length === 1, 'SUBSCRIBED');
  // The header is the kind's, from its module (the registry's names, server/kinds/).
  expect(events(nomadOnly)[0].omittedBackends).toEqual([
    {
      backend: { id: 'os' },
      reason: 'NO_CREDENTIAL',
      message:
        'backend "os" needs a credential (X-Auth-Token in connection_init) and the subscription carried none for it',
    },
  ]);
  await live.watcherCurrent('os');
  os.sim.seedVolume({ project: os.demo, name: 'os-data', size: 1 });
  await until(
    () => events(both).some((e) => e.volume?.name === 'os-data'),
    'the OpenStack volume at the subscriber with a token',
  );
  seedVolumes(nomad, 1, 'default', 'after');
  await until(
    () => events(nomadOnly).some((e) => e.volume?.name === 'after 0'),
    'the later Nomad volume at the subscriber without a Keystone token',
  );
  expect(nomadOnly.done).toBe(false);
  expect(nomadOnly.results.every((r) => r.errors === undefined)).toBe(true);
  expect(events(nomadOnly).some((e) => e.volume?.name === 'os-data')).toBe(false);
  expect(live.hub.counts().volumeChanged).toBe(2);
});

it('sends SUBSCRIBED only once the idle watcher woken by the subscription has its first view, so an attach right after it shows ATTACHING', async () => {
  const server = os.sim.seedServer({ project: os.demo, name: 'app-1' });
  const vid = os.sim.seedVolume({ project: os.demo, name: 'data', size: 1 });
  live = await startLive([watched()]);
  expect(live.hub.watcher('os')!.status().state).toBe('IDLE');
  // Cinder answers slowly: the watcher's first read takes a while (a CI run attached inside it).
  os.sim.setLatency(600, 'cinder');
  const started = Date.now();
  const s = await live.subscribe(
    `subscription($s: ID) { attachmentChanged(target: { server: $s }) { type attachment { state } omittedBackends { backend { id } } } }`,
    { s: server },
    { os: os.demoToken },
  );
  await until(() => s.results.length > 0, 'SUBSCRIBED');
  expect(Date.now() - started).toBeGreaterThanOrEqual(500);
  expect(live.hub.watcher('os')!.current).toBe(true);
  expect(events(s, 'attachmentChanged')[0]).toMatchObject({ type: 'SUBSCRIBED', omittedBackends: [] });
  os.sim.setLatency(0, 'cinder');
  const res = await live.run(
    ATTACH,
    { i: { volumeId: gid('os', os.demo, vid), target: { server: { serverId: server } } } },
    { os: os.demoToken },
  );
  expect(res.errors).toBeUndefined();
  await until(() => events(s, 'attachmentChanged').some((e) => e.type === 'ATTACHED'), 'ATTACHED', 20_000);
  const types = events(s, 'attachmentChanged').map((e) => e.type);
  expect(types.indexOf('ATTACHING')).toBeGreaterThan(0);
  expect(types.indexOf('ATTACHING')).toBeLessThan(types.indexOf('ATTACHED'));
});

it('names a watcher still without a first view in SUBSCRIBED when the wait for it runs out, and reports its changes once it has one', async () => {
  live = await startLive([watched()], { hub: { watcherWaitMs: 100 } });
  os.sim.setLatency(1500, 'cinder');
  const s = await live.subscribe(
    `subscription { volumeChanged { type volume { name } omittedBackends { backend { id } reason code message } } }`,
    {},
    { os: os.demoToken },
  );
  await until(() => s.results.length > 0, 'SUBSCRIBED');
  const [subscribed] = events(s);
  expect(subscribed.type).toBe('SUBSCRIBED');
  expect(subscribed.omittedBackends).toEqual([
    {
      backend: { id: 'os' },
      reason: 'FAILED',
      code: 'BACKEND_UNAVAILABLE',
      message: expect.stringContaining('first view'),
    },
  ]);
  await live.watcherCurrent('os');
  os.sim.setLatency(0, 'cinder');
  os.sim.seedVolume({ project: os.demo, name: 'later', size: 1 });
  await until(() => events(s).some((e) => e.type === 'CREATED' && e.volume?.name === 'later'), 'the later volume');
});

it('tells a subscriber in a project the watcher does not see (non-admin service user) so in SUBSCRIBED, and one in the watched project nothing', async () => {
  // The service user is demo, not an admin: the watcher lists project demo only.
  live = await startLive([
    os.backend('os', {
      auth: { method: 'password', username: OS.demoUser, password: OS.demoPassword, projectName: 'demo' },
      watchFastMs: 50,
      watchSlowMs: 100,
    }),
  ]);
  const query = `subscription { volumeChanged { type volume { name } omittedBackends { backend { id } reason code message } } }`;
  const outside = await live.subscribe(query, {}, { os: os.otherToken });
  const inside = await live.subscribe(query, {}, { os: os.demoToken });
  await until(() => outside.results.length > 0 && inside.results.length > 0, 'both SUBSCRIBED');
  expect(live.hub.watcher('os')!.onlyScope!()).toBe(os.demo);
  expect(events(outside)[0].omittedBackends).toEqual([
    {
      backend: { id: 'os' },
      reason: 'FAILED',
      code: 'UNSUPPORTED_BY_BACKEND',
      message: expect.stringContaining(`sees project ${os.demo} only`),
    },
  ]);
  expect(events(inside)[0].omittedBackends).toEqual([]);
  // What the omission says holds: a volume in project other reaches nobody, one in demo its subscriber.
  os.sim.seedVolume({ project: os.other, name: 'unseen', size: 1 });
  os.sim.seedVolume({ project: os.demo, name: 'seen', size: 1 });
  await until(() => events(inside).some((e) => e.volume?.name === 'seen'), 'the demo volume');
  expect(events(outside).some((e) => e.volume?.name === 'unseen')).toBe(false);
});
