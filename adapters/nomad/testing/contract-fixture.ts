/** Nomad's contract fixture (test/contract/): a backend built as the server builds it, talking HTTP to the Nomad simulator. */
import type { VolumeRef } from '../../contract/model';
import { build, control, GiB, type ContractFixture } from '../../../test/contract/fixture';
import { ANALYTICS_READ, MGMT } from '../../../test/support/constants';
import { seedVolumes, startNomad } from '../../../test/support/harness';

export const contractFixture: ContractFixture = {
  name: 'nomad (simulator)',
  async start() {
    const sim = await startNomad();
    const url = sim.url;
    const backend = build({
      id: 'east',
      kind: 'nomad',
      url,
      token: MGMT,
      timeoutMs: 5_000,
      maxConnections: 16,
      readRetries: 0,
    });
    const ref = (nativeId: string): VolumeRef => ({ backend: backend.id, namespace: 'default', nativeId });
    return {
      backend,
      scope: 'default',
      caller: { credential: { token: MGMT } },
      denied: { credential: { token: ANALYTICS_READ } },
      unknown: { credential: { token: 'no-such-secret' } },
      refuses: { denied: 'FORBIDDEN', unknown: 'FORBIDDEN' },
      seed: async (n, prefix) => seedVolumes(sim, n, 'default', prefix).map(ref),
      createSpec: (name) => ({
        namespace: 'default',
        name,
        capacityMinBytes: GiB,
        own: {
          nativeId: name,
          plugin: 'aws-ebs0',
          capabilities: [{ accessMode: 'SINGLE_NODE_WRITER', attachmentMode: 'FILE_SYSTEM' }],
        },
      }),
      missing: () => ref('no-such-volume'),
      control: {
        async addVolume(name) {
          await control(url, 'volumes', {
            ID: name,
            Name: name,
            Namespace: 'default',
            PluginID: 'aws-ebs0',
            ExternalID: `ext-${name}`,
            Capacity: GiB,
            RequestedCapabilities: [{ AccessMode: 'single-node-writer', AttachmentMode: 'file-system' }],
          });
          return ref(name);
        },
      },
      stop: () => backend.close(),
    };
  },
};
