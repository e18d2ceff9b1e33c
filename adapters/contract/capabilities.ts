/**
 * Capability interfaces: what only some backends do, beyond the core `VolumeBackend`. A backend
 * implements the ones it can; callers find them with the type guards below and refuse with
 * UNSUPPORTED_BY_BACKEND themselves (`server/registry.ts`), so no backend carries methods that
 * exist only to throw.
 */
import type { Accepted, CallOptions, HostConnector, OpaquePage, SnapshotRef, VolumeBackend, VolumeSpec } from './backend';
import type { CinderAction, CinderActionResult } from '../cinder-action';
import type { TrackedChanges } from './completion';
import type { Attachment, ExternalVolume, KeyValue, NovaServer, Plugin, Snapshot, Volume, VolumeRef } from './model';

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

/** Rename, describe, set metadata (Cinder). */
export interface VolumeUpdates {
  updateVolume(ref: VolumeRef, patch: VolumePatch, o: CallOptions): Promise<Volume>;
}

/** Reading one snapshot by id (Cinder; Nomad lists snapshots per plugin only). */
export interface SnapshotReads {
  getSnapshot(ref: SnapshotRef, o: CallOptions): Promise<Snapshot | null>;
}

/** Nomad: register an existing provider volume, or remove a volume from the catalogue only. */
export interface NomadRegistration {
  registerVolume(spec: VolumeSpec, o: CallOptions): Promise<VolumeRef>;
  deregisterVolume(ref: VolumeRef, force: boolean, o: CallOptions): Promise<void>;
}

/** Nomad: CSI plugins and the volumes their controllers know. */
export interface NomadPlugins {
  listPlugins(o: CallOptions): Promise<Plugin[]>;
  /** Full read; null when unknown. */
  getPlugin(pluginId: string, o: CallOptions): Promise<Plugin | null>;
  listExternalVolumes(q: { pluginId: string; namespace: string; limit: number; token: string | null }, o: CallOptions): Promise<OpaquePage<ExternalVolume>>;
}

/** Nomad: the claims held by allocations on client nodes, for a node entity owned by a scheduler subgraph. */
export interface NomadNodeClaims {
  /**
   * Each asked node's volume claims in every namespace the caller may list (empty when none or the
   * node is unknown): one filtered list call per node, then one read per volume found (Nomad has no
   * multi-get), through `readVolumes`.
   * @default readVolumes: the backend's own getVolumes
   */
  nodeClaims(nodeIds: readonly string[], o: CallOptions, readVolumes?: VolumeReader): Promise<Map<string, Attachment[]>>;
}

/** Cinder's own volume actions, by unified name (the wire table is the adapter's). */
export interface CinderActions {
  runCinderAction(ref: VolumeRef, action: CinderAction, o: CallOptions): Promise<Accepted<CinderActionResult>>;
  /** The Glance metadata Cinder holds for a volume. */
  showImageMetadata(ref: VolumeRef, o: CallOptions): Promise<KeyValue[]>;
}

/** Cinder's attachments API, step by step (attachVolume with a host does all steps at once). */
export interface CinderHostAttachments {
  /** Attachment records of the caller's project, optionally of one volume. */
  listHostAttachments(scope: string, q: { volumeId?: string; limit: number; token: string | null }, o: CallOptions): Promise<OpaquePage<Attachment>>;
  /** Reserves the volume for a host without a connector yet. */
  reserveHostAttachment(ref: VolumeRef, o: CallOptions): Promise<Attachment>;
  updateHostAttachment(ref: VolumeRef, attachmentId: string, connector: HostConnector, o: CallOptions): Promise<Attachment>;
  completeHostAttachment(ref: VolumeRef, attachmentId: string, o: CallOptions): Promise<void>;
}

/** Nova: servers and their volume attachments, in the caller's project. */
export interface NovaServers {
  /** Servers by id; missing ids are absent from the answer. */
  getServers(ids: readonly string[], o: CallOptions): Promise<Map<string, NovaServer>>;
  /**
   * Each asked server's volume attachments, Nova's list checked against Cinder's: an attachment
   * Nova lists and Cinder does not is in state ERROR with the reason. Servers unknown here map to [].
   * `readVolumes` reads the volumes for that check (the gateway passes its per-execution loader, so
   * the volumes are read once for the check and for whatever asks for them next).
   * @default readVolumes: the backend's own getVolumes
   */
  serverAttachments(serverIds: readonly string[], o: CallOptions, readVolumes?: VolumeReader): Promise<Map<string, Attachment[]>>;
  /** Swap the attached volume or change deleteOnTermination. */
  updateServerAttachment(serverId: string, volumeId: string, change: { newVolumeId?: string; deleteOnTermination?: boolean }, o: CallOptions): Promise<Accepted<void>>;
}

type Guard<T> = (b: VolumeBackend) => b is VolumeBackend & T;

const has =
  <T>(...methods: string[]): Guard<T> =>
  (b): b is VolumeBackend & T =>
    methods.every((m) => typeof (b as unknown as Record<string, unknown>)[m] === 'function');

export const hasVolumeUpdates: Guard<VolumeUpdates> = has('updateVolume');
export const hasSnapshotReads: Guard<SnapshotReads> = has('getSnapshot');
export const hasNomadRegistration: Guard<NomadRegistration> = has('registerVolume', 'deregisterVolume');
export const hasNomadPlugins: Guard<NomadPlugins> = has('listPlugins', 'getPlugin', 'listExternalVolumes');
export const hasNomadNodeClaims: Guard<NomadNodeClaims> = has('nodeClaims');
export const hasCinderActions: Guard<CinderActions> = has('runCinderAction', 'showImageMetadata');
export const hasCinderHostAttachments: Guard<CinderHostAttachments> = has('listHostAttachments', 'reserveHostAttachment', 'updateHostAttachment', 'completeHostAttachment');
export const hasNovaServers: Guard<NovaServers> = has('getServers', 'serverAttachments', 'updateServerAttachment');
export const hasTrackedChanges: Guard<TrackedChanges> = has('checkChange');

/** What the UNSUPPORTED_BY_BACKEND message calls each capability. */
export const CAPABILITY_NAMES = new Map<Guard<unknown>, string>([
  [hasVolumeUpdates, 'updating volumes'],
  [hasSnapshotReads, 'reading one snapshot'],
  [hasNomadRegistration, 'registering volumes'],
  [hasNomadPlugins, 'CSI plugins'],
  [hasNomadNodeClaims, 'node claims'],
  [hasCinderActions, 'Cinder volume actions'],
  [hasCinderHostAttachments, 'host attachments'],
  [hasNovaServers, 'Nova servers'],
  [hasTrackedChanges, 'tracked changes'],
]);
