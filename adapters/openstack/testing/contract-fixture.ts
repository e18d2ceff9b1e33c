/** OpenStack's contract fixture (test/contract/): a backend built as the server builds it, talking HTTP to the Keystone, Cinder and Nova simulator. */
import type { VolumeRef } from '../../contract/model';
import { build, control, GiB, type ContractFixture } from '../../../test/contract/fixture';
import { OS } from '../../../test/support/constants';
import { startOpenStack } from '../../../test/support/harness';

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
      }),
    );
    const ref = (nativeId: string): VolumeRef => ({ backend: backend.id, namespace: os.demo, nativeId });
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
      stop: () => backend.close(),
    };
  },
};
