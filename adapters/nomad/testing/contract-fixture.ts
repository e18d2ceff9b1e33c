/** Nomad's contract fixture (test/contract/): a backend built as the server builds it, talking HTTP to the Nomad simulator. */
import type { ProblemKind } from '../../contract/diagnosis';
import type { VolumeRef } from '../../contract/model';
import { build, control, GiB, type ContractFixture } from '../../../test/contract/fixture';
import { ANALYTICS_READ, MGMT, NODE1 } from '../../../test/support/constants';
import { NOMAD_PROBLEM_KINDS } from '../diagnosis';
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
      // Zero, so a condition `diagnosis.make` makes is past its threshold in the first pass that sees it.
      diagnosis: { stuckClaimMs: 0, missingPluginMs: 0 },
    });
    const ref = (nativeId: string): VolumeRef => ({ backend: backend.id, namespace: 'default', nativeId });
    let made = 0;
    /** A new volume on `pluginId` written by a running allocation on NODE1; the volume and allocation ids. */
    const claimed = async (pluginId: string): Promise<{ id: string; alloc: string }> => {
      const id = `doctor-${++made}`;
      await control(url, 'volumes', {
        ID: id,
        Namespace: 'default',
        PluginID: pluginId,
        ExternalID: `ext-${id}`,
        Capacity: GiB,
        RequestedCapabilities: [{ AccessMode: 'single-node-writer', AttachmentMode: 'file-system' }],
      });
      const placed = await control(url, 'allocations', {
        jobId: id,
        nodeId: NODE1,
        volumes: [{ volumeId: id, mode: 'write' }],
      });
      return { id, alloc: (placed as { id: string }).id };
    };
    /** Each kind's condition, as the Nomad failure it stands for (simulators/nomad/failures.ts). */
    const makers: Record<string, () => Promise<VolumeRef>> = {
      // A failed allocation whose claim the volume watcher could not release.
      STUCK_CLAIM: async () => {
        const { id, alloc } = await claimed('aws-ebs0');
        await control(url, `allocations/${alloc}/fail`, { holdClaims: true });
        return ref(id);
      },
      // A stopped allocation on a node whose plugin instance stopped: its own plugin, so no other volume is touched.
      CLAIM_ON_MISSING_PLUGIN: async () => {
        const plugin = `doctor-plugin-${made + 1}`;
        await control(url, 'plugins', {
          id: plugin,
          provider: 'hostpath.csi.k8s.io',
          version: 'v1.11.0',
          controllerRequired: false,
        });
        const { id, alloc } = await claimed(plugin);
        await control(url, `plugins/${plugin}/node-health`, { nodeId: NODE1, healthy: false });
        await control(url, `allocations/${alloc}/status`, { clientStatus: 'complete', desiredStatus: 'stop' });
        return ref(id);
      },
    };
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
      diagnosis: {
        service: { credential: { token: MGMT } },
        kinds: NOMAD_PROBLEM_KINDS,
        make: (kind: ProblemKind) => makers[kind]!(),
      },
      stop: () => backend.close(),
    };
  },
};
