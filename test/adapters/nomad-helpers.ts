/**
 * Shared setup of the Nomad adapter tests: a real Nomad simulator on a loopback port and a
 * `NomadBackend` talking HTTP to it. No gateway, no mocks.
 */
import type { CallOptions } from '../../adapters/contract/call-options';
import type { VolumeRef } from '../../adapters/contract/model';
import { NomadBackend, type NomadBackendOptions } from '../../adapters/nomad/backend';
import type { NomadSimulator, NomadSimulatorOptions } from '../../simulators/nomad';
import { MGMT } from '../support/constants';
import { nomadSimulator } from '../support/harness';

export { ANALYTICS_READ, MGMT, NODE1, NODE2 } from '../support/constants';
export { rejection } from '../support/harness';
export const BACKEND = 'east';

export interface NomadUnderTest {
  sim: NomadSimulator;
  backend: NomadBackend;
  /** Call options with the management token. */
  o: CallOptions;
  /** Call options with another token (or none: anonymous). */
  as(token?: string): CallOptions;
  ref(nativeId: string, namespace?: string): VolumeRef;
  /** Requests the simulator saw, as `METHOD path` lines (query in `sim.requests()`). */
  calls(): string[];
  stop(): Promise<void>;
}

/** The harness's standard simulator ({@link nomadSimulator}: ACLs on, its tokens, nodes and plugins) and a backend on it. */
export async function startNomadBackend(
  simOptions: NomadSimulatorOptions = {},
  backendOptions: Partial<NomadBackendOptions> = {},
): Promise<NomadUnderTest> {
  const sim = nomadSimulator(simOptions);
  const baseUrl = await sim.listen(0, '127.0.0.1');
  const backend = new NomadBackend({ backend: BACKEND, baseUrl, timeoutMs: 5_000, readRetries: 0, ...backendOptions });
  return {
    sim,
    backend,
    o: { credential: { token: MGMT } },
    as: (token) => ({ credential: token === undefined ? {} : { token } }),
    ref: (nativeId, namespace = 'default') => ({ backend: BACKEND, namespace, nativeId }),
    calls: () => sim.requests().map((r) => `${r.method} ${r.path}`),
    async stop() {
      await backend.close();
      await sim.close();
    },
  };
}

/** Seeds volume `id` on aws-ebs0: 10 GiB, single-node-writer, ext4 with a mount flag, a stored secret. */
export function seedVolume(
  sim: NomadSimulator,
  id: string,
  namespace = 'default',
  extra: Record<string, unknown> = {},
): void {
  sim.seedVolume({
    ID: id,
    Name: `${id} name`,
    Namespace: namespace,
    PluginID: 'aws-ebs0',
    ExternalID: `vol-${id}`,
    Capacity: 10 * 2 ** 30,
    RequestedCapacityMin: 10 * 2 ** 30,
    RequestedCapabilities: [{ AccessMode: 'single-node-writer', AttachmentMode: 'file-system' }],
    MountOptions: { FSType: 'ext4', MountFlags: ['noatime'] },
    Secrets: { password: 'hunter2-secret' },
    ...extra,
  });
}
