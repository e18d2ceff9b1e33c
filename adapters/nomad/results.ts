/**
 * Nomad wire shapes (backends.md 1.5) and their mapping to the unified model. Wire names stay in
 * this folder: code outside `adapters/nomad/` imports only the `to*` mappers' results.
 *
 * Status mapping (documented in docs/nomad.md):
 * - Volume: Nomad has no status field. `IN_USE` when any read or write claim is held
 *   (CurrentReaders + CurrentWriters > 0), else `UNAVAILABLE` when not schedulable (plugin has no
 *   healthy nodes, or needs a controller and has none), else `AVAILABLE`. `backendStatus` is
 *   `readers=<n> writers=<n> schedulable=<bool>`.
 * - Attachment (a claim): from the claiming allocation, see {@link attachmentState}.
 */
import type {
  AccessMode,
  Attachment,
  AttachmentMode,
  AttachmentState,
  ControllerFeature,
  ExternalVolume,
  KeyValue,
  NomadAllocationConsumer,
  Plugin,
  PluginInstance,
  Snapshot,
  Topology,
  Volume,
  VolumeDetail,
  VolumeStatus,
} from '../model';

/** A Nomad integer: a number, or a decimal string when it has 16+ digits (see `parseNomadJson`). */
type Int = number | bigint | string;

export interface WireTopology {
  Segments: Record<string, string> | null;
}

/** Plugin-derived fields that volumes and plugins both carry (denormalised at read time). */
interface WirePluginHealth {
  Provider: string;
  ControllerRequired: boolean;
  ControllersHealthy: number;
  ControllersExpected: number;
  NodesHealthy: number;
  NodesExpected: number;
  CreateIndex: Int;
  ModifyIndex: Int;
}

/** CSIVolListStub (list element). */
export interface WireVolumeStub extends WirePluginHealth {
  ID: string;
  Namespace: string;
  Name: string;
  ExternalID: string;
  Topologies: WireTopology[] | null;
  AccessMode: string;
  AttachmentMode: string;
  CurrentReaders: number;
  CurrentWriters: number;
  Schedulable: boolean;
  PluginID: string;
  CreateTime: Int;
  ModifyTime: Int;
}

/** AllocListStub, as embedded in a volume's `Allocations`. */
export interface WireAllocStub {
  ID: string;
  Name: string;
  Namespace: string;
  NodeID: string;
  NodeName: string;
  JobID: string;
  JobType: string;
  TaskGroup: string;
  DesiredStatus: string;
  ClientStatus: string;
  CreateTime: Int;
  ModifyTime: Int;
}

/** CSIVolume (full read). */
export interface WireVolume extends Omit<WireVolumeStub, 'CurrentReaders' | 'CurrentWriters'> {
  RequestedTopologies: { Required: WireTopology[] | null; Preferred: WireTopology[] | null } | null;
  MountOptions: { FSType: string; MountFlags: string[] | null } | null;
  Parameters: Record<string, string> | null;
  Context: Record<string, string> | null;
  Capacity: Int;
  RequestedCapacityMin: Int;
  RequestedCapacityMax: Int;
  RequestedCapabilities: Array<{ AccessMode: string; AttachmentMode: string }> | null;
  CloneID: string;
  SnapshotID: string;
  ReadAllocs: Record<string, unknown> | null;
  WriteAllocs: Record<string, unknown> | null;
  ProviderVersion: string;
  Allocations: WireAllocStub[] | null;
}

/** Register/create reply envelope (QueryMeta inlined). */
export interface WireVolumeWriteReply {
  Volumes: WireVolume[] | null;
  Warnings: string;
  Index: Int;
}

export interface WireExternalVolume {
  ExternalID: string;
  CapacityBytes: Int;
  VolumeContext: Record<string, string> | null;
  CloneID: string;
  SnapshotID: string;
  PublishedExternalNodeIDs: string[] | null;
  IsAbnormal: boolean;
  Status: string;
}

export interface WireExternalList {
  Volumes: WireExternalVolume[] | null;
  NextToken: string;
}

export interface WireSnapshot {
  ID: string;
  ExternalSourceVolumeID: string;
  SizeBytes: Int;
  /** Unix seconds, from the plugin. */
  CreateTime: Int;
  IsReady: boolean;
  SourceVolumeID: string;
  PluginID: string;
  Name: string;
}

export interface WireSnapshotList {
  Snapshots: WireSnapshot[] | null;
  NextToken: string;
}

export interface WirePluginStub extends WirePluginHealth {
  ID: string;
}

interface WireCSIInfo {
  AllocID: string;
  Healthy: boolean;
  HealthDescription: string;
  UpdateTime: string | null;
  ProviderVersion: string;
  ControllerInfo?: Record<string, boolean>;
  NodeInfo?: { ID: string; MaxVolumes: number; AccessibleTopology: WireTopology | null };
}

export interface WirePlugin extends WirePluginStub {
  Version: string;
  Controllers: Record<string, WireCSIInfo> | null;
  Nodes: Record<string, WireCSIInfo> | null;
}

// ---- scalars ------------------------------------------------------------------------------

const ACCESS_MODES: Record<string, AccessMode> = {
  'single-node-reader-only': 'SINGLE_NODE_READER_ONLY',
  'single-node-writer': 'SINGLE_NODE_WRITER',
  'multi-node-reader-only': 'MULTI_NODE_READER_ONLY',
  'multi-node-single-writer': 'MULTI_NODE_SINGLE_WRITER',
  'multi-node-multi-writer': 'MULTI_NODE_MULTI_WRITER',
};
const ATTACHMENT_MODES: Record<string, AttachmentMode> = { 'file-system': 'FILE_SYSTEM', 'block-device': 'BLOCK_DEVICE' };

/** Unified → Nomad access mode (for requests). */
export const NOMAD_ACCESS_MODE: Record<AccessMode, string> = Object.fromEntries(
  Object.entries(ACCESS_MODES).map(([k, v]) => [v, k]),
) as Record<AccessMode, string>;
export const NOMAD_ATTACHMENT_MODE: Record<AttachmentMode, string> = { FILE_SYSTEM: 'file-system', BLOCK_DEVICE: 'block-device' };

const accessMode = (s: string): AccessMode | null => ACCESS_MODES[s] ?? null;
const attachmentMode = (s: string): AttachmentMode | null => ATTACHMENT_MODES[s] ?? null;
const nonEmpty = (s: string | null | undefined): string | null => (s ? s : null);

/** A count or index as a JS number; values beyond 2^53 (never seen for these fields) lose precision. */
const num = (v: Int | null | undefined): number | null => (v === null || v === undefined ? null : Number(v));

/** Unix nanoseconds → RFC 3339 with nanoseconds; 0 (never set) → null. Exact for bigint input. */
export function nanosToIso(v: Int | null | undefined): string | null {
  if (v === null || v === undefined) return null;
  const ns = BigInt(v);
  if (ns === 0n) return null;
  const seconds = ns / 1_000_000_000n;
  const frac = (ns % 1_000_000_000n).toString().padStart(9, '0');
  return `${new Date(Number(seconds) * 1000).toISOString().slice(0, 19)}.${frac}Z`;
}

/** Unix seconds → RFC 3339; 0 → null. */
const secondsToIso = (v: Int | null | undefined): string | null => (v ? new Date(Number(v) * 1000).toISOString() : null);

const keyValues = (m: Record<string, string> | null | undefined): KeyValue[] =>
  Object.entries(m ?? {})
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([key, value]) => ({ key, value: String(value) }));

const topology = (t: WireTopology | null | undefined): Topology => ({ segments: keyValues(t?.Segments) });
const topologies = (ts: WireTopology[] | null | undefined): Topology[] => (ts ?? []).map(topology);

// ---- volumes ------------------------------------------------------------------------------

/** Volume status table (see the module comment). */
export function volumeStatus(readers: number, writers: number, schedulable: boolean): VolumeStatus {
  if (readers + writers > 0) return 'IN_USE';
  return schedulable ? 'AVAILABLE' : 'UNAVAILABLE';
}

function baseVolume(backend: string, w: WireVolume | WireVolumeStub, readers: number, writers: number): Volume {
  return {
    ref: { backend, namespace: w.Namespace, nativeId: w.ID },
    externalId: nonEmpty(w.ExternalID),
    name: w.Name,
    status: volumeStatus(readers, writers, w.Schedulable),
    backendStatus: `readers=${readers} writers=${writers} schedulable=${w.Schedulable}`,
    accessMode: accessMode(w.AccessMode),
    attachmentMode: attachmentMode(w.AttachmentMode),
    topologies: topologies(w.Topologies),
    schedulable: w.Schedulable,
    pluginId: nonEmpty(w.PluginID),
    provider: nonEmpty(w.Provider),
    controllerRequired: w.ControllerRequired,
    controllers: { healthy: w.ControllersHealthy, expected: w.ControllersExpected },
    nodes: { healthy: w.NodesHealthy, expected: w.NodesExpected },
    currentReaders: readers,
    currentWriters: writers,
    createIndex: num(w.CreateIndex),
    modifyIndex: num(w.ModifyIndex),
    createTime: nanosToIso(w.CreateTime),
    modifyTime: nanosToIso(w.ModifyTime),
  };
}

/** List stub → volume without detail. */
export function toVolumeFromStub(backend: string, w: WireVolumeStub): Volume {
  return baseVolume(backend, w, w.CurrentReaders, w.CurrentWriters);
}

/** Full read → volume with detail and attachments. */
export function toVolume(backend: string, w: WireVolume): Volume {
  const readIds = Object.keys(w.ReadAllocs ?? {});
  const writeIds = Object.keys(w.WriteAllocs ?? {});
  const v = baseVolume(backend, w, readIds.length, writeIds.length);
  const stubs = new Map((w.Allocations ?? []).map((a) => [a.ID, a]));
  const ref = v.ref;
  const attach = (id: string, access: Attachment['access']): Attachment => {
    const a = stubs.get(id);
    return { volume: ref, consumerId: id, access, state: attachmentState(a), backendState: a ? a.ClientStatus : null, consumer: toConsumer(id, a) };
  };
  const detail: VolumeDetail = {
    capacityBytes: num(w.Capacity) || null,
    requestedCapacityMinBytes: num(w.RequestedCapacityMin) || null,
    requestedCapacityMaxBytes: num(w.RequestedCapacityMax) || null,
    requestedCapabilities: (w.RequestedCapabilities ?? []).map((c) => ({
      accessMode: accessMode(c.AccessMode),
      attachmentMode: attachmentMode(c.AttachmentMode),
    })),
    requestedTopologies: w.RequestedTopologies
      ? { required: topologies(w.RequestedTopologies.Required), preferred: topologies(w.RequestedTopologies.Preferred) }
      : null,
    providerVersion: nonEmpty(w.ProviderVersion),
    mountOptions: w.MountOptions ? { fsType: nonEmpty(w.MountOptions.FSType), mountFlags: w.MountOptions.MountFlags ?? [] } : null,
    parameters: keyValues(w.Parameters),
    context: keyValues(w.Context),
    cloneId: nonEmpty(w.CloneID),
    snapshotId: nonEmpty(w.SnapshotID),
    attachments: [...readIds.map((id) => attach(id, 'READ_ONLY')), ...writeIds.map((id) => attach(id, 'READ_WRITE'))],
  };
  return { ...v, detail };
}

/**
 * Claim state from the claiming allocation. A claim stays in ReadAllocs/WriteAllocs until Nomad
 * has unpublished it (backends.md 1.6.3), so a stopped or collected allocation is DETACHING:
 * - no allocation stub (garbage-collected, claim not yet freed) → DETACHING
 * - client `pending` → ATTACHING
 * - client `running`, desired `run` → ATTACHED; desired `stop`/`evict` → DETACHING
 * - client `complete` / `failed` / `lost` → DETACHING
 * - client `unknown` (node disconnected) or anything else → ERROR
 */
export function attachmentState(a: WireAllocStub | undefined): AttachmentState {
  if (!a) return 'DETACHING';
  switch (a.ClientStatus) {
    case 'pending':
      return a.DesiredStatus === 'run' ? 'ATTACHING' : 'DETACHING';
    case 'running':
      return a.DesiredStatus === 'run' ? 'ATTACHED' : 'DETACHING';
    case 'complete':
    case 'failed':
    case 'lost':
      return 'DETACHING';
    default:
      return 'ERROR';
  }
}

function toConsumer(id: string, a: WireAllocStub | undefined): NomadAllocationConsumer {
  return {
    kind: 'NomadAllocation',
    id,
    name: a?.Name ?? null,
    namespace: a?.Namespace ?? null,
    jobId: a?.JobID ?? null,
    jobType: a?.JobType ?? null,
    taskGroup: a?.TaskGroup ?? null,
    nodeId: a?.NodeID ?? null,
    nodeName: a?.NodeName ?? null,
    clientStatus: a?.ClientStatus ?? null,
    desiredStatus: a?.DesiredStatus ?? null,
    createTime: nanosToIso(a?.CreateTime),
    modifyTime: nanosToIso(a?.ModifyTime),
  };
}

/** The token that resumes a volume listing at this stub: `<namespace>.<id>` (backends.md 1.3). */
export const volumePosition = (w: { Namespace: string; ID: string }): string => `${w.Namespace}.${w.ID}`;

// ---- external volumes, snapshots, plugins -------------------------------------------------

export function toExternalVolume(backend: string, pluginId: string, w: WireExternalVolume): ExternalVolume {
  return {
    backend,
    pluginId,
    externalId: w.ExternalID,
    capacityBytes: num(w.CapacityBytes),
    context: keyValues(w.VolumeContext),
    cloneId: nonEmpty(w.CloneID),
    snapshotId: nonEmpty(w.SnapshotID),
    publishedNodeIds: w.PublishedExternalNodeIDs ?? [],
    abnormal: w.IsAbnormal,
    condition: nonEmpty(w.Status),
  };
}

/**
 * Snapshot entries carry only provider fields (backends.md 1.4.9): create replies have an empty
 * PluginID and Name, so the caller passes what it asked for.
 */
export function toSnapshot(backend: string, w: WireSnapshot, known: { pluginId: string; name?: string }): Snapshot {
  const pluginId = nonEmpty(w.PluginID) ?? known.pluginId;
  return {
    backend,
    scope: pluginId,
    nativeId: w.ID,
    name: nonEmpty(w.Name) ?? known.name ?? null,
    pluginId,
    sourceExternalVolumeId: nonEmpty(w.ExternalSourceVolumeID),
    sizeBytes: num(w.SizeBytes),
    createTime: secondsToIso(w.CreateTime),
    ready: w.IsReady,
  };
}

export function toPluginFromStub(backend: string, w: WirePluginStub): Plugin {
  return {
    backend,
    nativeId: w.ID,
    provider: nonEmpty(w.Provider),
    controllerRequired: w.ControllerRequired,
    controllers: { healthy: w.ControllersHealthy, expected: w.ControllersExpected },
    nodes: { healthy: w.NodesHealthy, expected: w.NodesExpected },
    createIndex: num(w.CreateIndex),
    modifyIndex: num(w.ModifyIndex),
  };
}

const CONTROLLER_FEATURES: Record<string, ControllerFeature> = {
  SupportsCreateDelete: 'CREATE_DELETE',
  SupportsAttachDetach: 'ATTACH_DETACH',
  SupportsListVolumes: 'LIST_VOLUMES',
  SupportsGetCapacity: 'GET_CAPACITY',
  SupportsCreateDeleteSnapshot: 'CREATE_DELETE_SNAPSHOT',
  SupportsListSnapshots: 'LIST_SNAPSHOTS',
  SupportsClone: 'CLONE',
  SupportsReadOnlyAttach: 'READ_ONLY_ATTACH',
  SupportsExpand: 'EXPAND',
  SupportsListVolumesAttachedNodes: 'LIST_VOLUMES_PUBLISHED_NODES',
  SupportsCondition: 'CONDITION',
  SupportsGet: 'GET',
};

function instances(role: PluginInstance['role'], m: Record<string, WireCSIInfo> | null): PluginInstance[] {
  return Object.entries(m ?? {})
    .sort(([a], [b]) => (a < b ? -1 : 1))
    .map(([nodeId, i]) => ({
      role,
      nodeId,
      allocationId: nonEmpty(i.AllocID),
      healthy: i.Healthy,
      healthDescription: nonEmpty(i.HealthDescription),
      updateTime: i.UpdateTime ?? null,
      providerVersion: nonEmpty(i.ProviderVersion),
      providerNodeId: nonEmpty(i.NodeInfo?.ID),
      maxVolumes: i.NodeInfo ? i.NodeInfo.MaxVolumes : null,
      accessibleTopology: i.NodeInfo?.AccessibleTopology ? topology(i.NodeInfo.AccessibleTopology) : null,
    }));
}

export function toPlugin(backend: string, w: WirePlugin): Plugin {
  // Controllers of one plugin report the same features; union them in case versions differ.
  const features = new Set<ControllerFeature>();
  for (const c of Object.values(w.Controllers ?? {})) {
    for (const [k, v] of Object.entries(c.ControllerInfo ?? {})) if (v && CONTROLLER_FEATURES[k]) features.add(CONTROLLER_FEATURES[k]!);
  }
  return {
    ...toPluginFromStub(backend, w),
    detail: {
      version: nonEmpty(w.Version),
      controllerFeatures: Object.values(CONTROLLER_FEATURES).filter((f) => features.has(f)),
      instances: [...instances('CONTROLLER', w.Controllers), ...instances('NODE', w.Nodes)],
    },
  };
}
