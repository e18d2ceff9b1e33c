/**
 * Internal state records, named and shaped after Nomad's Go structs (nomad/structs/csi.go,
 * alloc.go, node.go) so that the bexpr evaluator and the wire builders can walk them by their
 * Go field names. int64 sizes and Unix-nanosecond times are `bigint` (nanoseconds pass 2^53); raft
 * indexes and small counters are `number`.
 */

/** `structs.CSITopology`: `Segments` is a Go map (nil ⇒ null). */
export interface CSITopology {
  Segments: Map<string, string> | null;
}

/** `structs.CSITopologyRequest`. */
export interface CSITopologyRequest {
  Required: Array<CSITopology | null> | null;
  Preferred: Array<CSITopology | null> | null;
}

/** `structs.CSIMountOptions`. */
export interface CSIMountOptions {
  FSType: string;
  MountFlags: string[] | null;
}

/** `structs.CSIVolumeCapability`. */
export interface CSIVolumeCapability {
  AttachmentMode: string;
  AccessMode: string;
}

/** Claim modes (`structs.CSIVolumeClaimMode`). */
export const ClaimMode = { Read: 0, Write: 1, GC: 2 } as const;

/** Claim states (`structs.CSIVolumeClaimState`, hashicorp/nomad nomad/structs/csi.go). */
export const ClaimState = {
  Taken: 0,
  NodeDetached: 1,
  ControllerDetached: 2,
  ReadyToFree: 3,
  Unpublishing: 4,
} as const;

/** `structs.CSIVolumeClaim` (never on the HTTP wire, visible to `filter` only). */
export interface CSIVolumeClaim {
  AllocationID: string;
  NodeID: string;
  ExternalNodeID: string;
  Mode: number;
  AccessMode: string;
  AttachmentMode: string;
  State: number;
}

/**
 * `structs.CSIVolume` as stored in the state store. ReadAllocs/WriteAllocs values are always nil
 * in the store (the alloc pointers are only filled by denormalisation), so they are modelled as
 * key sets.
 */
export interface CSIVolume {
  ID: string;
  Name: string;
  ExternalID: string;
  Namespace: string;
  RequestedTopologies: CSITopologyRequest | null;
  Topologies: Array<CSITopology | null> | null;
  AccessMode: string;
  AttachmentMode: string;
  MountOptions: CSIMountOptions | null;
  Secrets: Map<string, string> | null;
  Parameters: Map<string, string> | null;
  Context: Map<string, string> | null;
  Capacity: bigint;
  RequestedCapacityMin: bigint;
  RequestedCapacityMax: bigint;
  RequestedCapabilities: Array<CSIVolumeCapability | null> | null;
  CloneID: string;
  SnapshotID: string;
  ReadAllocs: Map<string, null> | null;
  WriteAllocs: Map<string, null> | null;
  ReadClaims: Map<string, CSIVolumeClaim> | null;
  WriteClaims: Map<string, CSIVolumeClaim> | null;
  PastClaims: Map<string, CSIVolumeClaim> | null;
  Schedulable: boolean;
  PluginID: string;
  Provider: string;
  ProviderVersion: string;
  ControllerRequired: boolean;
  ControllersHealthy: number;
  ControllersExpected: number;
  NodesHealthy: number;
  NodesExpected: number;
  /** RFC3339 text of a non-zero `time.Time`, or null for the zero time (always, in practice). */
  ResourceExhausted: string | null;
  CreateIndex: number;
  ModifyIndex: number;
  CreateTime: bigint;
  ModifyTime: bigint;
}

/** The 12 `Supports*` flags of `structs.CSIControllerInfo`, in declaration order. */
export interface ControllerCapabilities {
  SupportsCreateDelete: boolean;
  SupportsAttachDetach: boolean;
  SupportsListVolumes: boolean;
  SupportsGetCapacity: boolean;
  SupportsCreateDeleteSnapshot: boolean;
  SupportsListSnapshots: boolean;
  SupportsClone: boolean;
  SupportsReadOnlyAttach: boolean;
  SupportsExpand: boolean;
  SupportsListVolumesAttachedNodes: boolean;
  SupportsCondition: boolean;
  SupportsGet: boolean;
}

export const CONTROLLER_CAPABILITY_NAMES: Array<keyof ControllerCapabilities> = [
  'SupportsCreateDelete',
  'SupportsAttachDetach',
  'SupportsListVolumes',
  'SupportsGetCapacity',
  'SupportsCreateDeleteSnapshot',
  'SupportsListSnapshots',
  'SupportsClone',
  'SupportsReadOnlyAttach',
  'SupportsExpand',
  'SupportsListVolumesAttachedNodes',
  'SupportsCondition',
  'SupportsGet',
];

/**
 * A CSI plugin as the simulator tracks it. Nomad derives the per-node `Controllers`/`Nodes`
 * fingerprint maps from plugin allocations; here they are computed from these counts and the
 * simulated nodes (see state.ts `pluginInstances`).
 */
export interface PluginRecord {
  ID: string;
  Provider: string;
  Version: string;
  ControllerRequired: boolean;
  ControllersHealthy: number;
  ControllersExpected: number;
  /** null: the node plugin runs as a system job, one instance per simulated node. */
  NodesHealthy: number | null;
  NodesExpected: number | null;
  capabilities: ControllerCapabilities;
  topology: Map<string, string> | null;
  CreateIndex: number;
  ModifyIndex: number;
  CreateTime: bigint;
  ModifyTime: bigint;
  /** When health last changed; CSIInfo.UpdateTime. */
  UpdateTime: bigint;
  /**
   * Node-plugin instances whose health was set one node at a time (`setNodePluginHealth`), by node
   * id; every other instance follows the counts above.
   */
  nodeHealth: Map<string, NodePluginHealth>;
}

/**
 * One node's plugin instance as its client last fingerprinted it (`structs.CSIInfo`): when the
 * instance stops, the client's last fingerprint marks it unhealthy and the node keeps it listed
 * (hashicorp/nomad client/pluginmanager/csimanager/instance.go `runLoop`, fingerprint.go).
 */
export interface NodePluginHealth {
  healthy: boolean;
  HealthDescription: string;
  UpdateTime: bigint;
}

/** A task-group `volume` block of type csi, as the alloc's job carries it. */
export interface AllocVolumeRequest {
  Source: string;
  ReadOnly: boolean;
  AccessMode: string;
  AttachmentMode: string;
}

/** The part of `structs.Allocation` the CSI endpoints read. */
export interface AllocRecord {
  ID: string;
  EvalID: string;
  Name: string;
  Namespace: string;
  NodeID: string;
  JobID: string;
  JobType: string;
  JobVersion: number;
  TaskGroup: string;
  DesiredStatus: string;
  DesiredDescription: string;
  ClientStatus: string;
  ClientDescription: string;
  CreateIndex: number;
  ModifyIndex: number;
  CreateTime: bigint;
  ModifyTime: bigint;
  volumes: AllocVolumeRequest[];
  /** Plugin job allocation (controller/node instance), not a volume consumer. */
  pluginAlloc?: { pluginId: string; type: 'controller' | 'node' };
}

/** A simulated client node. */
export interface NodeRecord {
  ID: string;
  Name: string;
  Status: 'ready' | 'down';
  CreateIndex: number;
}

export interface NamespaceRecord {
  Name: string;
  CreateIndex: number;
}

/** Provider-side (storage backend) volume, as the controller plugin's ListVolumes reports it. */
export interface ProviderVolume {
  ExternalID: string;
  CapacityBytes: bigint;
  VolumeContext: Map<string, string> | null;
  CloneID: string;
  SnapshotID: string;
  /** Provider node ids the volume is attached (controller-published) to. */
  PublishedExternalNodeIDs: string[];
  IsAbnormal: boolean;
  Status: string;
}

/** Provider-side snapshot. */
export interface ProviderSnapshot {
  ID: string;
  ExternalSourceVolumeID: string;
  SizeBytes: bigint;
  /** Unix seconds, as the CSI plugin reports it. */
  CreateTime: bigint;
  IsReady: boolean;
  /** Epoch ms after which a pending snapshot reports ready. */
  readyAt: number;
}

export const TERMINAL_CLIENT_STATUSES = new Set(['complete', 'failed', 'lost']);

/** `Allocation.TerminalStatus()`: desired stop/evict or a terminal client status. */
export function allocTerminal(a: AllocRecord): boolean {
  return a.DesiredStatus === 'stop' || a.DesiredStatus === 'evict' || TERMINAL_CLIENT_STATUSES.has(a.ClientStatus);
}
