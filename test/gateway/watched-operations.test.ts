/**
 * Watched operations through the gateway's own wiring: the watcher directory the gateway builds
 * first is filled by its live hub and asked by its tracker. An attach started while the OpenStack
 * watcher keeps the project current is checked with the service credential, so it still completes
 * after the caller's Keystone token expired; started before the watcher is current, the same attach
 * is polled with the caller's token and fails with it. The same for a Nomad detach whose claim
 * Nomad's volume watcher frees after the answer, with the caller's token revoked. Real gateway over
 * HTTP, real OpenStack and Nomad simulators.
 */
import type { NomadSimulator } from '../../simulators/nomad';
import {
  disposeAll,
  MGMT,
  OS,
  seedVolumes,
  startGatewayFor,
  startNomad,
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

/** A backend's watcher status, as `/readyz` reports it. */
async function watcher(backend = 'os'): Promise<{ state: string; currentAt: number | null } | undefined> {
  const res = await fetch(gw.gateway.url.replace('/graphql', '/readyz'));
  const body = (await res.json()) as {
    watchers: Array<{ backend: string; watcher: { state: string; currentAt: number | null } | null }>;
  };
  return body.watchers.find((w) => w.backend === backend)?.watcher ?? undefined;
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

afterEach(disposeAll);

describe('watched operations through the gateway', () => {
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

describe('a watched Nomad detach through the gateway', () => {
  let sim: NomadSimulator;
  const admin = { 'x-nomad-token': MGMT };
  /** A gateway on the simulator, with the service token (a watcher) or without (none). */
  const start = async (token?: string): Promise<void> => {
    sim = await startNomad({ claimReleaseDelayMs: Infinity });
    seedVolumes(sim, 1);
    gw = await startGatewayFor([{ id: 'east', url: sim.url, token }], {
      operationOptions: { pollMs: 50, maxPollMs: 100 },
    });
  };

  /**
   * Detaches a stopped allocation's claim with a token of its own while Nomad's volume watcher is
   * paused (the operation RUNNING), revokes that token, then lets Nomad free the claim; the operation's id.
   */
  async function detachThenRevoke(): Promise<string> {
    const alloc = sim.placeAllocation({
      jobId: 'old',
      nodeId: 'node-2222',
      volumes: [{ volumeId: 'vol-000', mode: 'write' }],
    });
    sim.setAllocationStatus(alloc, { clientStatus: 'complete' });
    sim.addToken({ secret: 'detacher', namespaces: { default: 'write' } });
    sim.setVolumeWatcherPaused(true);
    const id = Buffer.from(JSON.stringify(['Volume', 'east', 'default', 'vol-000'])).toString('base64url');
    const res = await gw.gql(
      `mutation($id: ID!) { detachVolume(input: { volumeId: $id, target: { node: { nodeId: "node-2222" } } }) { operation { id state } } }`,
      { id },
      { 'x-nomad-token': 'detacher' },
    );
    expect(res.body.errors).toBeUndefined();
    expect(res.body.data.detachVolume.operation.state).toBe('RUNNING');
    sim.removeToken('detacher');
    sim.setVolumeWatcherPaused(false);
    return res.body.data.detachVolume.operation.id as string;
  }

  it("should finish with the service token when Nomad's claim event reaches the watcher, though the caller's token was revoked", async () => {
    await start(MGMT);
    await until(async () => (await watcher('east'))?.state === 'STREAMING', 'the Nomad watcher to stream');
    const done = await waitOperation(gw, await detachThenRevoke(), admin);
    expect(done).toMatchObject({ state: 'SUCCEEDED', backendStatus: 'readers=0 writers=0 schedulable=true' });
  });

  it('should poll with the caller token without a watcher (the revoked token fails it)', async () => {
    await start();
    const done = await waitOperation(gw, await detachThenRevoke(), admin);
    expect(done).toMatchObject({ state: 'FAILED', failureReason: expect.stringContaining('Permission denied') });
  });
});
