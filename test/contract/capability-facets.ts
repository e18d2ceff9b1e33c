/**
 * Which facet delivers which advertised capability: the one place the contract suite knows the
 * capability mechanism (facets, the optional members of `VolumeBackend` in
 * `adapters/contract/capabilities.ts`). The table is the suite's own statement of the contract, not
 * a copy of the adapters' derivation; the compiler checks that it names every facet.
 */
import type { VolumeBackend } from '../../adapters/contract/backend';
import type { CallOptions } from '../../adapters/contract/call-options';
import type { BackendFacets, Facet } from '../../adapters/contract/capabilities';
import type { TrackedChanges } from '../../adapters/contract/completion';
import type { Capability, VolumeRef } from '../../adapters/contract/model';
import type { Watching } from '../../adapters/contract/watch';

/** The capabilities each facet backs: advertised exactly when the facet is present (none: the facet advertises nothing). */
export const FACET_CAPABILITIES: { readonly [F in Facet]-?: readonly Capability[] } = {
  volumeUpdates: ['UPDATE_VOLUME'],
  snapshotReads: ['READ_SNAPSHOT'],
  registration: ['REGISTER_VOLUME'],
  storagePlugins: ['LIST_PLUGINS', 'LIST_EXTERNAL_VOLUMES'],
  nodeAttachments: [],
  volumeActions: ['VOLUME_ACTIONS', 'REVERT_VOLUME'],
  hostAttachments: ['HOST_ATTACHMENTS'],
  serverAttachments: ['SERVER_ATTACHMENTS'],
  trackedChanges: ['TRACKED_OPERATIONS'],
  watching: [],
  subscriberAccess: [],
  callerScope: [],
  diagnosis: ['VOLUME_DIAGNOSIS'],
};

const FACETS = Object.keys(FACET_CAPABILITIES) as Facet[];

/** Whether `b` has facet `f`. */
const has = (b: BackendFacets, f: Facet): boolean => b[f] !== undefined;

/** Capabilities the core `VolumeBackend` delivers: every backend advertises them. */
export const CORE_CAPABILITIES: readonly Capability[] = ['LIST_VOLUMES', 'READ_VOLUME'];

/** For each facet's capability: the facet present, and the capability advertised (the suite expects them equal). */
export function facetReport(
  b: VolumeBackend,
): Array<{ facet: Facet; capability: Capability; present: boolean; advertised: boolean }> {
  return FACETS.flatMap((facet) =>
    FACET_CAPABILITIES[facet].map((capability) => ({
      facet,
      capability,
      present: has(b, facet),
      advertised: b.capabilities.has(capability),
    })),
  );
}

/**
 * Core methods some backends cannot do: a backend that does not advertise the capability must
 * refuse the call with UNSUPPORTED_BY_BACKEND (and never reach its backend for it).
 */
export const CORE_CALLS: ReadonlyArray<{
  capability: Capability;
  call(b: VolumeBackend, ref: VolumeRef, o: CallOptions): Promise<unknown>;
}> = [
  {
    capability: 'ATTACH_VOLUME',
    call: (b, ref, o) => b.attachVolume(ref, { kind: 'host', connector: { host: 'contract-host' } }, o),
  },
  { capability: 'EXTEND_VOLUME', call: (b, ref, o) => b.extendVolume(ref, 2 * 2 ** 30, o) },
];

/** How the backend follows a change it accepted but has not finished; undefined when it cannot. */
export const changeTracking = (b: VolumeBackend): TrackedChanges | undefined => b.trackedChanges;

/** The backend's live view; undefined when it has none. */
export const watching = (b: VolumeBackend): Watching | undefined => b.watching;

/**
 * Whether the backend may answer a change before it is done (and so return it pending): only the
 * backends that advertise tracked operations, whose `trackedChanges` follows it; the others finish
 * every change before they answer. A backend that tracks changes may still finish some at once
 * (Nomad creates synchronously and tracks only what a detach leaves to its volume watcher).
 */
export const answersPending = (b: VolumeBackend): boolean => b.capabilities.has('TRACKED_OPERATIONS');
