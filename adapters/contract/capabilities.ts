/**
 * Capabilities: what only some backends do, beyond the core `VolumeBackend`. Each is a facet, an
 * optional member of the backend ({@link BackendFacets}) typed by its interface below and named by
 * what it does. A backend sets the ones it has and nothing else, so there are no methods that
 * exist only to refuse; callers ask `registry.capable(b, 'hostAttachments')`, which answers
 * UNSUPPORTED_BY_BACKEND for a backend without it. Facet names are checked by the compiler, and
 * the advertised `StorageBackend.capabilities` are derived from the facets ({@link advertise}).
 */
import type { Accepted, OpaquePage } from './call-answers';
import type { AttachTarget, HostConnector, SnapshotRef, VolumeSpec } from './call-inputs';
import type { CallOptions } from './call-options';
import type { TrackedChanges } from './completion';
import {
  CAPABILITIES,
  type Attachment,
  type Capability,
  type ComputeServer,
  type KeyValue,
  type Snapshot,
  type Volume,
  type VolumeRef,
} from './model';
import type { ExternalVolume, Plugin } from './model-plugin';
import type { Diagnosis } from './diagnosis';
import type { SubscriberAccess, Watching } from './watch';

/**
 * Reads full volumes, one value or Error per ref. The gateway passes its per-execution loader, so
 * volumes a capability reads on the way are read once for it and for whatever asks for them next.
 */
export type VolumeReader = (refs: readonly VolumeRef[]) => Promise<Array<Volume | null | Error>>;

/** Changeable descriptive fields. */
export interface VolumePatch {
  name?: string;
  description?: string;
  /** Replaces the user metadata. */
  metadata?: KeyValue[];
}

/** Rename, describe, set metadata. */
export interface VolumeUpdates {
  updateVolume(ref: VolumeRef, patch: VolumePatch, o: CallOptions): Promise<Volume>;
}

/** Reading one snapshot by id (a backend that lists snapshots per plugin only has none). */
export interface SnapshotReads {
  getSnapshot(ref: SnapshotRef, o: CallOptions): Promise<Snapshot | null>;
}

/** Registering an existing provider volume, or removing a volume from the catalogue only. */
export interface VolumeRegistration {
  registerVolume(spec: VolumeSpec, o: CallOptions): Promise<VolumeRef>;
  deregisterVolume(ref: VolumeRef, force: boolean, o: CallOptions): Promise<void>;
}

/** Storage (CSI) plugins and the volumes their controllers know. */
export interface StoragePlugins {
  listPlugins(o: CallOptions): Promise<Plugin[]>;
  /** Full read; null when unknown. */
  getPlugin(pluginId: string, o: CallOptions): Promise<Plugin | null>;
  listExternalVolumes(
    q: { pluginId: string; namespace: string; limit: number; token: string | null },
    o: CallOptions,
  ): Promise<OpaquePage<ExternalVolume>>;
}

/** The attachments (claims) held by consumers on client nodes, for a node entity owned by a scheduler subgraph. */
export interface NodeAttachments {
  /**
   * Each asked node's attachments in every scope the caller may list (empty when none or the node
   * is unknown), reading the volumes found through `readVolumes`.
   * @default readVolumes: the backend's own getVolumes
   */
  listNodeAttachments(
    nodeIds: readonly string[],
    o: CallOptions,
    readVolumes?: VolumeReader,
  ): Promise<Map<string, Attachment[]>>;
}

/** One volume action: its unified name and its arguments; the backend's own union says which exist. */
export interface VolumeAction {
  action: string;
}

/** What a volume action returns besides the volume itself. */
export interface VolumeActionResult {
  /** setImageMetadata: all image metadata after the action. */
  imageMetadata?: KeyValue[];
  /** initializeConnection only: the driver's connection info (secret-bearing; never logged). */
  connectionInfo?: unknown;
  /** completeMigration: the id the backend kept. */
  savedVolumeId?: string;
  /** uploadToImage: the image being created. */
  image?: { id: string; name: string; diskFormat: string | null; containerFormat: string | null };
}

/** A backend's own volume actions, by unified name (the wire table is the adapter's). */
export interface VolumeActions {
  /** Runs one action; the backend's implementation accepts its own action union. */
  runVolumeAction(ref: VolumeRef, action: VolumeAction, o: CallOptions): Promise<Accepted<VolumeActionResult>>;
  /** The image metadata the backend holds for a volume. */
  showImageMetadata(ref: VolumeRef, o: CallOptions): Promise<KeyValue[]>;
}

/** Host attachments, step by step (attachVolume with a host does all steps at once). */
export interface HostAttachments {
  /** Attachment records of the caller's scope, optionally of one volume. */
  listHostAttachments(
    scope: string,
    q: { volumeId?: string; limit: number; token: string | null },
    o: CallOptions,
  ): Promise<OpaquePage<Attachment>>;
  /** Reserves the volume for a host without a connector yet. */
  reserveHostAttachment(ref: VolumeRef, o: CallOptions): Promise<Attachment>;
  updateHostAttachment(
    ref: VolumeRef,
    attachmentId: string,
    connector: HostConnector,
    o: CallOptions,
  ): Promise<Attachment>;
  completeHostAttachment(ref: VolumeRef, attachmentId: string, o: CallOptions): Promise<void>;
}

/** Compute servers and their volume attachments, in the caller's scope. */
export interface ServerAttachments {
  /** Servers by id; missing ids are absent from the answer. */
  getServers(ids: readonly string[], o: CallOptions): Promise<Map<string, ComputeServer>>;
  /**
   * Each asked server's volume attachments, checked against the volume service where the backend
   * has two (an attachment one lists and the other does not is in state ERROR with the reason).
   * Servers unknown here map to []. `readVolumes` reads the volumes for that check.
   * @default readVolumes: the backend's own getVolumes
   */
  listServerAttachments(
    serverIds: readonly string[],
    o: CallOptions,
    readVolumes?: VolumeReader,
  ): Promise<Map<string, Attachment[]>>;
  /**
   * The attachment an accepted attach to a server is making, in state ATTACHING, for when the
   * backend answered with none (Nova ≥ 2.101 answers without a body): the live path announces it
   * at once. Reads nothing.
   */
  startedAttachment(ref: VolumeRef, target: Extract<AttachTarget, { kind: 'server' }>): Attachment;
  /** Swap the attached volume or change deleteOnTermination. */
  updateServerAttachment(
    serverId: string,
    volumeId: string,
    change: { newVolumeId?: string; deleteOnTermination?: boolean },
    o: CallOptions,
  ): Promise<Accepted<void>>;
}

/** A namespace (Nomad namespace, OpenStack project) with its name for people. */
export interface NamespaceName {
  /** What volumes carry as their namespace (an OpenStack project id). */
  id: string;
  /** Its display name; null when the backend did not say. */
  name: string | null;
}

/** Credentials bound to one namespace (an OpenStack token to its project), which the backend can name. */
export interface CallerScope {
  /**
   * The namespace `o.credential` is bound to, with its name; null when no credential was given.
   * @throws UnauthenticatedError when the credential is invalid or expired
   */
  callerNamespace(o: CallOptions): Promise<NamespaceName | null>;
}

/**
 * The optional facets of a backend, by what they do. `VolumeBackend` extends this, so a facet is
 * reached as `b.hostAttachments` and its absence is a compile-time `undefined`.
 */
export interface BackendFacets {
  readonly volumeUpdates?: VolumeUpdates;
  readonly snapshotReads?: SnapshotReads;
  readonly registration?: VolumeRegistration;
  readonly storagePlugins?: StoragePlugins;
  readonly nodeAttachments?: NodeAttachments;
  readonly volumeActions?: VolumeActions;
  readonly hostAttachments?: HostAttachments;
  readonly serverAttachments?: ServerAttachments;
  /** Changes the backend finishes after answering, evaluated from completion rules. */
  readonly trackedChanges?: TrackedChanges;
  /** A live view kept with the gateway's own credential (watch.ts). */
  readonly watching?: Watching;
  /** Whether a subscriber may see a change, and what of it (watch.ts). */
  readonly subscriberAccess?: SubscriberAccess;
  /** The namespace a caller's credential is bound to, named. */
  readonly callerScope?: CallerScope;
  /** Checks for stuck, failed and drifting volumes, run by the doctor on the watcher's view (diagnosis.ts). */
  readonly diagnosis?: Diagnosis;
}

/** A facet's name. */
export type Facet = keyof BackendFacets;

/** What a facet is called, for people. */
export type FacetNames = { readonly [F in Facet]?: string };

/**
 * What the UNSUPPORTED_BY_BACKEND message calls each facet, in neutral words. A kind's module may
 * name the facets it has in its own words (`BackendModule.facetNames`: OpenStack's volume actions
 * are Cinder's), and the registry says those where a registered kind gives them.
 */
export const FACET_NAMES: { readonly [F in Facet]-?: string } = {
  volumeUpdates: 'updating volumes',
  snapshotReads: 'reading one snapshot',
  registration: 'registering volumes',
  storagePlugins: 'CSI plugins',
  nodeAttachments: 'node claims',
  volumeActions: 'volume actions',
  hostAttachments: 'host attachments',
  serverAttachments: 'compute servers',
  trackedChanges: 'tracked changes',
  watching: 'live status',
  subscriberAccess: 'subscriber access checks',
  callerScope: "the caller's namespace",
  diagnosis: 'volume diagnosis',
};

/**
 * Capabilities every backend's core answers for itself: the core methods a kind may refuse
 * (a backend whose consumers claim volumes does not attach). Each backend lists the ones it does.
 */
export const CORE_CAPABILITIES = [
  'LIST_VOLUMES',
  'READ_VOLUME',
  'CREATE_VOLUME',
  'DELETE_VOLUME',
  'ATTACH_VOLUME',
  'DETACH_VOLUME',
  'EXTEND_VOLUME',
  'LIST_SNAPSHOTS',
  'CREATE_SNAPSHOT',
  'DELETE_SNAPSHOT',
] as const satisfies readonly Capability[];

export type CoreCapability = (typeof CORE_CAPABILITIES)[number];

/** The public capabilities each facet gives: every capability is core or comes from exactly here. */
const FACET_CAPABILITIES: { readonly [F in Facet]-?: readonly Exclude<Capability, CoreCapability>[] } = {
  volumeUpdates: ['UPDATE_VOLUME'],
  snapshotReads: ['READ_SNAPSHOT'],
  registration: ['REGISTER_VOLUME'],
  storagePlugins: ['LIST_EXTERNAL_VOLUMES', 'LIST_PLUGINS'],
  nodeAttachments: [],
  volumeActions: ['REVERT_VOLUME', 'VOLUME_ACTIONS'],
  hostAttachments: ['HOST_ATTACHMENTS'],
  serverAttachments: ['SERVER_ATTACHMENTS'],
  trackedChanges: ['TRACKED_OPERATIONS'],
  watching: [],
  subscriberAccess: [],
  callerScope: [],
  diagnosis: ['VOLUME_DIAGNOSIS'],
};

/**
 * The capabilities a backend advertises: the core ones it lists and those of the facets it has,
 * in the schema's order. Backends set `capabilities` from it once their facets are set.
 */
export function advertise(facets: BackendFacets, core: readonly CoreCapability[]): ReadonlySet<Capability> {
  const have = new Set<Capability>(core);
  for (const f of Object.keys(FACET_CAPABILITIES) as Facet[])
    if (facets[f]) for (const c of FACET_CAPABILITIES[f]) have.add(c);
  return new Set<Capability>(CAPABILITIES.filter((c) => have.has(c)));
}
