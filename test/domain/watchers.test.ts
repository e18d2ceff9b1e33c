/**
 * The watcher directory (domain/watchers.ts) over real watchers, registered by the live hub's feed:
 * a Nomad cluster watched with the management token (its view serves reads), and an OpenStack
 * region whose service user is not an admin (its view covers its own project only and serves no
 * reads). What it answers the tracker (the service credential of a watched scope) and the loaders
 * (a view that may serve reads) follows each watcher's facets, currency and scope.
 */
import { WatcherDirectory } from '../../domain/watchers';
import {
  disposeAll,
  MGMT,
  OS,
  seedVolumes,
  startNomad,
  startOpenStack,
  type OpenStackUnderTest,
} from '../support/harness';
import type { NomadSimulator } from '../../simulators/nomad';
import { startLive, type LiveUnderTest } from '../subscriptions/live-helpers';

let nomad: NomadSimulator;
let os: OpenStackUnderTest;
let live: LiveUnderTest | undefined;
let dir: WatcherDirectory;
let nomadIds: string[];

beforeEach(async () => {
  nomad = await startNomad();
  nomadIds = seedVolumes(nomad, 2, 'default');
  os = await startOpenStack();
  dir = new WatcherDirectory((id) => live?.services.registry.find(id));
  const demoService = {
    method: 'password' as const,
    username: OS.demoUser,
    password: OS.demoPassword,
    projectName: 'demo',
  };
  live = await startLive(
    [
      { id: 'east', url: nomad.url, token: MGMT },
      os.backend('os', { auth: demoService, watchFastMs: 50, watchSlowMs: 100 }),
    ],
    { hub: { watchers: dir } },
  );
});

afterEach(async () => {
  await live?.stop();
  live = undefined;
  await disposeAll();
});

describe('watcher directory', () => {
  it('should hold the watchers the live feed started, the same the hub reports', () => {
    expect(dir.watcher('east')).toBe(live!.hub.watcher('east'));
    expect(dir.watcher('os')).toBe(live!.hub.watcher('os'));
    expect(dir.entries().map(([id]) => id)).toEqual(['east', 'os']);
    expect(dir.watcher('nowhere')).toBeUndefined();
  });

  it("should check a current Nomad watcher's scopes with the service credential and serve reads from its view", async () => {
    expect(dir.current('east', 'default')).toBe(live!.hub.watcher('east'));
    expect(await dir.serviceCredential('east', 'default')!()).toEqual({ token: MGMT });
    const view = dir.readView('east', 'default');
    expect(view).toBeDefined();
    const ref = { backend: 'east', namespace: 'default', nativeId: nomadIds[0]! };
    expect(view!(ref)).toEqual(await live!.backend('east').getVolume(ref, { credential: { token: MGMT } }));
  });

  it("should not count an idle OpenStack watcher as current, and once current cover only its service user's project, serving no reads", async () => {
    // Nobody listens and nothing is pending: the watcher has not read.
    expect(dir.watcher('os')!.current).toBe(false);
    expect(dir.serviceCredential('os', os.demo)).toBeUndefined();
    // A subscriber wakes it.
    await live!.subscribe('subscription { volumeChanged { type } }', {}, { os: os.demoToken });
    await live!.watcherCurrent('os');
    expect(await dir.serviceCredential('os', os.demo)!()).toMatchObject({ token: expect.any(String) });
    expect(dir.serviceCredential('os', os.other)).toBeUndefined();
    expect(dir.current('os', os.other)).toBeUndefined();
    // Access on OpenStack is not per project alone (admin-only fields): its view never serves reads.
    expect(dir.readView('os', os.demo)).toBeUndefined();
  });

  it('should answer nothing once the watchers stopped', async () => {
    await live!.hub.close();
    expect(dir.watcher('east')!.current).toBe(false);
    expect(dir.serviceCredential('east', 'default')).toBeUndefined();
    expect(dir.readView('east', 'default')).toBeUndefined();
  });
});
