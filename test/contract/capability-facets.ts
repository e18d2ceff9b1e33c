/**
 * Which facet delivers which advertised capability: the one place the contract suite knows the
 * capability mechanism (the guards of `adapters/contract/capabilities.ts` as they are today). When
 * the mechanism changes, this table changes and the suite does not.
 */
import type { CallOptions, VolumeBackend } from '../../adapters/contract/backend';
import {
  hasCinderActions,
  hasCinderHostAttachments,
  hasNomadPlugins,
  hasNomadRegistration,
  hasNovaServers,
  hasSnapshotReads,
  hasTrackedChanges,
  hasVolumeUpdates,
} from '../../adapters/contract/capabilities';
import type { Capability, VolumeRef } from '../../adapters/contract/model';

/** One facet: its name for messages, whether a backend has it, and the capabilities it backs. */
export interface Facet {
  name: string;
  present(b: VolumeBackend): boolean;
  /** Advertised exactly when the facet is present. */
  capabilities: readonly Capability[];
}

export const FACETS: readonly Facet[] = [
  { name: 'volume updates', present: hasVolumeUpdates, capabilities: ['UPDATE_VOLUME'] },
  { name: 'snapshot reads', present: hasSnapshotReads, capabilities: ['READ_SNAPSHOT'] },
  { name: 'registration', present: hasNomadRegistration, capabilities: ['REGISTER_VOLUME'] },
  { name: 'storage plugins', present: hasNomadPlugins, capabilities: ['LIST_PLUGINS', 'LIST_EXTERNAL_VOLUMES'] },
  { name: 'volume actions', present: hasCinderActions, capabilities: ['VOLUME_ACTIONS'] },
  { name: 'host attachments', present: hasCinderHostAttachments, capabilities: ['HOST_ATTACHMENTS'] },
  { name: 'server attachments', present: hasNovaServers, capabilities: ['SERVER_ATTACHMENTS'] },
  { name: 'tracked changes', present: hasTrackedChanges, capabilities: ['TRACKED_OPERATIONS'] },
];

/** Capabilities the core `VolumeBackend` delivers: every backend advertises them. */
export const CORE_CAPABILITIES: readonly Capability[] = ['LIST_VOLUMES', 'READ_VOLUME'];

/** For each facet: present, and each of its capabilities advertised (the suite expects them equal). */
export function facetReport(b: VolumeBackend): Array<{ facet: string; capability: Capability; present: boolean; advertised: boolean }> {
  return FACETS.flatMap((f) => f.capabilities.map((capability) => ({ facet: f.name, capability, present: f.present(b), advertised: b.capabilities.has(capability) })));
}

/**
 * Core methods some backends cannot do: a backend that does not advertise the capability must
 * refuse the call with UNSUPPORTED_BY_BACKEND (and never reach its backend for it).
 */
export const CORE_CALLS: ReadonlyArray<{ capability: Capability; call(b: VolumeBackend, ref: VolumeRef, o: CallOptions): Promise<unknown> }> = [
  { capability: 'ATTACH_VOLUME', call: (b, ref, o) => b.attachVolume(ref, { kind: 'host', connector: { host: 'contract-host' } }, o) },
  { capability: 'EXTEND_VOLUME', call: (b, ref, o) => b.extendVolume(ref, 2 * 2 ** 30, o) },
];

/** Whether a change the backend accepted but has not finished can be followed to its end. */
export const tracksChanges = hasTrackedChanges;

/**
 * Whether the backend answers a create before the volume is ready (and so returns it pending):
 * the backends that advertise tracked operations (OpenStack); the others create at once (Nomad).
 */
export const createsPending = (b: VolumeBackend): boolean => b.capabilities.has('TRACKED_OPERATIONS');
