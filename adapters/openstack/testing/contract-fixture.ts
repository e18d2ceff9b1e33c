/** OpenStack's contract fixture (test/contract/): a backend built as the server builds it, talking HTTP to the Keystone, Cinder and Nova simulator. */
import type { ProblemKind } from '../../contract/diagnosis';
import type { VolumeRef } from '../../contract/model';
import { build, control, GiB, type ContractFixture } from '../../../test/contract/fixture';
import { OS } from '../../../test/support/constants';
import { startOpenStack } from '../../../test/support/harness';
import { OPENSTACK_PROBLEM_KINDS } from '../diagnosis';

/** Every doctor threshold at 0, so a condition `make` leaves is past it at once. */
const NO_WAIT = {
  creatingMs: 0,
  attachingMs: 0,
  detachingMs: 0,
  extendingMs: 0,
  deletingMs: 0,
  copyBaseMs: 0,
  copyPerGiBMs: 0,
  driftGraceMs: 0,
};

export const contractFixture: ContractFixture = {
  name: 'openstack (simulator)',
  async start() {
    const os = await startOpenStack();
    const backend = build(
      os.backend('os', {
        readRetries: 0,
        auth: { method: 'password', username: OS.adminUser, password: OS.adminPassword, projectName: 'demo' },
        watchFastMs: 50,
        watchSlowMs: 100,
        doctor: NO_WAIT,
      }),
    );
    const ref = (nativeId: string): VolumeRef => ({ backend: backend.id, namespace: os.demo, nativeId });
    const post = async (route: string, body: unknown): Promise<string> =>
      ((await control(os.keystoneUrl, route, body)) as { id: string }).id;
    /** A server in demo with a new volume attached to it, as a completed Nova attach leaves them. */
    const attached = async (name: string): Promise<{ server: string; volume: string }> => {
      const server = await post('servers', { project: 'demo', name });
      const volume = await post('volumes', { project: 'demo', name: `${name}-vol`, size: 1 });
      await control(os.keystoneUrl, 'attachments', { serverId: server, volumeId: volume });
      return { server, volume };
    };
    const service = await backend.subscriberAccess!.serviceCredential();
    let made = 0;
    return {
      backend,
      scope: os.demo,
      caller: { credential: { token: os.demoToken } },
      denied: { credential: { token: os.otherToken } },
      unknown: { credential: { token: 'gAAAAA-no-such-token' } },
      refuses: { denied: 'HIDDEN', unknown: 'UNAUTHENTICATED' },
      async seed(n, prefix) {
        const refs: VolumeRef[] = [];
        for (let i = 0; i < n; i++)
          refs.push(ref(os.sim.seedVolume({ project: 'demo', name: `${prefix} ${i}`, size: 1 })));
        return refs;
      },
      createSpec: (name) => ({ namespace: os.demo, name, capacityMinBytes: GiB }),
      missing: () => ref('00000000-0000-4000-8000-000000000000'),
      control: {
        async addVolume(name) {
          const created = await control(os.keystoneUrl, 'volumes', { project: 'demo', name, size: 1 });
          return ref(created.id as string);
        },
      },
      diagnosis: {
        service: { credential: service! },
        kinds: OPENSTACK_PROBLEM_KINDS,
        // Each through the simulator's control API, as the failure leaves it (simulators/openstack/README.md).
        async make(kind: ProblemKind) {
          const name = `doctor-${++made}`;
          if (kind === 'ERROR_STATE')
            return ref(await post('volumes', { project: 'demo', name, size: 1, status: 'error_extending' }));
          const { server, volume } = await attached(name);
          if (kind === 'STUCK_TRANSITION')
            await control(os.keystoneUrl, 'failures/stuck-detaching', { serverId: server, volumeId: volume });
          else if (kind === 'ATTACHMENT_DRIFT')
            await control(os.keystoneUrl, 'failures/server-deleted-keeping-attachments', { serverId: server });
          else throw new Error(`the OpenStack doctor does not find ${kind}`);
          return ref(volume);
        },
      },
      stop: () => backend.close(),
    };
  },
};
