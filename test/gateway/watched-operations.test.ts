/**
 * Watched operations through the gateway's own wiring: the watcher directory the gateway builds
 * first is filled by its live hub and asked by its tracker. An attach started while the OpenStack
 * watcher keeps the project current is checked with the service credential, so it still completes
 * after the caller's Keystone token expired; started before the watcher is current, the same attach
 * is polled with the caller's token and fails with it. Real gateway over HTTP, real OpenStack simulator.
 */
import {
  disposeAll,
  OS,
  startGatewayFor,
  startOpenStack,
  waitOperation,
  type GatewayUnderTest,
  type OpenStackUnderTest,
} from '../support/harness';
import { until } from '../support/until';

const ATTACH = `mutation($i: AttachVolumeInput!) { attachVolume(input: $i) { operation { id state } } }`;
const EXTEND = `mutation($i: ExtendVolumeInput!) { extendVolume(input: $i) { operation { id state } } }`;

let os: OpenStackUnderTest;
let gw: GatewayUnderTest;

const gid = (nativeId: string): string =>
  Buffer.from(JSON.stringify(['Volume', 'os', os.demo, nativeId])).toString('base64url');

/** The OpenStack watcher's status, as `/readyz` reports it. */
async function watcher(): Promise<{ state: string; currentAt: number | null } | undefined> {
  const res = await fetch(gw.gateway.url.replace('/graphql', '/readyz'));
  const body = (await res.json()) as {
    watchers: Array<{ backend: string; watcher: { state: string; currentAt: number | null } | null }>;
  };
  return body.watchers.find((w) => w.backend === 'os')?.watcher ?? undefined;
}

/** Attaches a new volume to a server with a token of its own, then expires that token. */
async function attachThenExpire(): Promise<string> {
  const server = os.sim.seedServer({ project: os.demo, name: `app-${Date.now()}` });
  const volume = os.sim.seedVolume({ project: os.demo, name: `data-${Date.now()}`, size: 1 });
  const caller = os.sim.issueToken({ user: OS.demoUser, project: 'demo' });
  const res = await gw.gql(
    ATTACH,
    { i: { volumeId: gid(volume), target: { server: { serverId: server } } } },
    { 'x-auth-token': caller },
  );
  expect(res.body.errors).toBeUndefined();
  expect(res.body.data.attachVolume.operation.state).toBe('PENDING');
  os.sim.expireToken(caller);
  return res.body.data.attachVolume.operation.id as string;
}

beforeEach(async () => {
  // A slow extend keeps an operation pending (the watcher's demand) while an attach runs.
  os = await startOpenStack({ delays: { attachMs: 300, extendMs: 8_000 } });
  const service = {
    method: 'password' as const,
    username: OS.adminUser,
    password: OS.adminPassword,
    projectName: 'demo',
  };
  gw = await startGatewayFor([os.backend('os', { auth: service, watchFastMs: 50, watchSlowMs: 100 })], {
    operationOptions: { pollMs: 50, maxPollMs: 100 },
  });
});
afterEach(disposeAll);

describe('watched operations through the gateway', () => {
  it('should complete an attach whose caller token expired when the watcher kept the project current as it started', async () => {
    // The pending extend wakes the idle watcher; once it is current, the attach is watched.
    const pending = os.sim.seedVolume({ project: os.demo, name: 'growing', size: 1 });
    const extend = await gw.gql(
      EXTEND,
      { i: { volumeId: gid(pending), newSizeGiB: 2 } },
      { 'x-auth-token': os.demoToken },
    );
    expect(extend.body.errors).toBeUndefined();
    await until(
      async () => (await watcher())?.state === 'POLLING' && (await watcher())?.currentAt !== null,
      'the OpenStack watcher to be current',
      20_000,
    );

    const id = await attachThenExpire();
    const done = await waitOperation(gw, id, { 'x-auth-token': os.adminToken }, 20_000);
    expect(done).toMatchObject({ state: 'SUCCEEDED', backendStatus: 'in-use' });
  });

  it('should poll with the caller token when no watcher was current as the attach started (the expired token fails it)', async () => {
    expect((await watcher())?.state).not.toBe('POLLING');
    const id = await attachThenExpire();
    const done = await waitOperation(gw, id, { 'x-auth-token': os.adminToken }, 20_000);
    expect(done).toMatchObject({ state: 'FAILED', failureReason: expect.stringContaining('expired') });
  });
});
