/**
 * The system under fuzz: a Nomad simulator and an OpenStack simulator with seeded data, and a
 * real gateway in this process in front of both. Also the vocabulary of real names (backend ids,
 * namespaces, plugin ids, native ids, tokens) that the generators mix with hostile values, so
 * that many requests get past the first check and reach the backends.
 */
import { encodeGlobalId } from '../../adapters/contract/ids';
import type { NomadSimulator } from '../../simulators/nomad';
import {
  disposeAll,
  MGMT,
  seedVolumes,
  startGatewayFor,
  startNomad,
  startOpenStack,
  type GatewayUnderTest,
  type OpenStackUnderTest,
} from '../support/harness';

/** Backend ids as configured in the gateway under fuzz. */
export const NOMAD_ID = 'nomad-east';
export const OPENSTACK_ID = 'os';

/**
 * Gateway settings for the fuzz run: the shipped defaults (limits, per-caller rates) except a
 * caller rate far above what one sequential fuzzer sends, so that answers are about the
 * document, not the pace (a 429 would not be a finding anyway).
 */
export const FUZZ_GATEWAY_OPTIONS = {
  http: {
    rateLimit: {
      caller: { requestsPerSecond: 100_000, burst: 100_000 },
      address: { requestsPerSecond: 100_000, burst: 100_000 },
    },
  },
};

/** Real names the generators draw from; everything here exists in the simulators. */
export interface Vocabulary {
  backends: string[];
  namespaces: string[];
  plugins: string[];
  nodes: string[];
  /** Native ids of seeded objects (Nomad volume ids, Cinder/Nova UUIDs, allocation ids). */
  nativeIds: string[];
  /** OpenStack project ids (the scope of OpenStack global ids). */
  projects: string[];
  /** Global ids of seeded volumes, as the gateway issues them. */
  volumeIds: string[];
  /** Valid caller headers: one set per backend and one with every credential. */
  credentials: Array<Record<string, string>>;
  /** Federation entity types (`_Entity`'s members), read from the introspected schema (run.ts); empty until then. */
  entityTypes: string[];
}

export interface World {
  gateway: GatewayUnderTest;
  /** Origin of the gateway, e.g. `http://127.0.0.1:4123`. */
  origin: string;
  nomad: NomadSimulator;
  openstack: OpenStackUnderTest;
  vocabulary: Vocabulary;
  /** Stops the gateway and the simulators (bounded: a gateway that cannot stop is reported, not waited for). */
  dispose(): Promise<void>;
}

/** Nomad: 12 + 4 single-writer volumes, 2 multi-writer volumes shared by two allocations each (so nesting volume → attachment → volume fans out). */
function seedNomad(sim: NomadSimulator): string[] {
  const ids = [...seedVolumes(sim, 12), ...seedVolumes(sim, 4, 'analytics', 'an')];
  const allocs: string[] = [];
  for (const shared of ['shared-a', 'shared-b']) {
    sim.seedVolume({
      ID: shared,
      Name: shared,
      Namespace: 'default',
      PluginID: 'aws-ebs0',
      ExternalID: `ext-${shared}`,
      Capacity: 10737418240,
      RequestedCapabilities: [{ AccessMode: 'multi-node-multi-writer', AttachmentMode: 'file-system' }],
    });
    for (const node of ['node-1111', 'node-2222']) {
      allocs.push(
        sim.placeAllocation({
          jobId: `job-${shared}`,
          nodeId: node,
          volumes: [
            { volumeId: shared, mode: 'write', accessMode: 'multi-node-multi-writer', attachmentMode: 'file-system' },
          ],
        }),
      );
    }
    ids.push(shared);
  }
  sim.addSnapshot('aws-ebs0', {
    ID: 'snap-0001',
    ExternalSourceVolumeID: 'ext-default-vol-000',
    SizeBytes: 10737418240,
  });
  return [...ids, ...allocs, 'snap-0001'];
}

/** OpenStack: 6 volumes (one multiattach on three servers), 3 servers, one snapshot. */
function seedOpenStack(os: OpenStackUnderTest): string[] {
  const vols = Array.from({ length: 5 }, (_, i) =>
    os.sim.seedVolume({ project: os.demo, name: `data-${i}`, size: 1 + i }),
  );
  const multi = os.sim.seedVolume({ project: os.demo, name: 'multi', size: 2, multiattach: true });
  const servers = Array.from({ length: 3 }, (_, i) => os.sim.seedServer({ project: os.demo, name: `web-${i}` }));
  for (const s of servers) os.sim.attachNow(s, multi);
  os.sim.attachNow(servers[0]!, vols[0]!);
  const snap = os.sim.seedSnapshot({ volumeId: vols[1]!, name: 'snap' });
  return [...vols, multi, ...servers, snap];
}

export async function startWorld(): Promise<World> {
  const nomad = await startNomad();
  const nomadIds = seedNomad(nomad);
  const openstack = await startOpenStack();
  const osIds = seedOpenStack(openstack);
  const gateway = await startGatewayFor(
    [{ id: NOMAD_ID, url: nomad.url }, openstack.backend(OPENSTACK_ID)],
    FUZZ_GATEWAY_OPTIONS,
  );
  const nomadAuth = { 'x-nomad-token': MGMT };
  const osAuth = { 'x-auth-token': openstack.demoToken };
  return {
    gateway,
    origin: new URL(gateway.gateway.url).origin,
    nomad,
    openstack,
    vocabulary: {
      backends: [NOMAD_ID, OPENSTACK_ID],
      namespaces: ['default', 'analytics'],
      plugins: ['aws-ebs0', 'hostpath'],
      nodes: ['node-1111', 'node-2222'],
      nativeIds: [...nomadIds, ...osIds],
      projects: [openstack.demo, openstack.other],
      volumeIds: [
        encodeGlobalId({ kind: 'Volume', backend: NOMAD_ID, scope: 'default', nativeId: 'vol-000' }),
        encodeGlobalId({ kind: 'Volume', backend: NOMAD_ID, scope: 'default', nativeId: 'shared-a' }),
        encodeGlobalId({ kind: 'Volume', backend: OPENSTACK_ID, scope: openstack.demo, nativeId: osIds[0]! }),
        encodeGlobalId({ kind: 'Volume', backend: OPENSTACK_ID, scope: openstack.demo, nativeId: osIds[5]! }),
      ],
      credentials: [
        { ...nomadAuth, ...osAuth },
        nomadAuth,
        osAuth,
        {
          ...nomadAuth,
          ...osAuth,
          [`x-nomad-token-${NOMAD_ID}`]: MGMT,
          [`x-auth-token-${OPENSTACK_ID}`]: openstack.demoToken,
        },
      ],
      entityTypes: [],
    },
    dispose: () => withTimeout(disposeAll(), 15_000, 'the gateway and simulators did not stop within 15 s'),
  };
}

/** Resolves with `p`, or rejects after `ms` with `message` (the timer never keeps the process alive). */
export function withTimeout<T>(p: Promise<T>, ms: number, message: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(message)), ms);
    timer.unref();
  });
  return Promise.race([p, late]).finally(() => clearTimeout(timer));
}
