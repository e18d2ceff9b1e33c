/**
 * Nomad's wire shapes (hashicorp/nomad nomad/structs/csi.go and extensions.go), in Go field names,
 * as the adapter reads them. Only `adapters/nomad/` imports this module; the `results.ts` mappers of each folder turn these into the model.
 */

/** A Nomad integer: a number, or a decimal string when it has 16+ digits (see `parseNomadJson`). */
export type Int = number | bigint | string;

export interface WireTopology {
  Segments: Record<string, string> | null;
}

/** Plugin-derived fields that volumes and plugins both carry (denormalised at read time). */
export interface WirePluginHealth {
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

export interface WireCSIInfo {
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

/** Snapshot create reply (QueryMeta inlined); entries carry provider fields only (hashicorp/nomad nomad/csi_endpoint.go `CreateSnapshot`). */
export interface WireSnapshotCreateReply {
  Snapshots: WireSnapshot[] | null;
}

/**
 * One event of `/v1/event/stream` (hashicorp/nomad nomad/structs/event.go). The watcher reads only what names the
 * changed object: payloads carry `Allocations: []` and stale health, so volumes are re-read.
 */
export interface WireEvent {
  Topic: string;
  Type: string;
  /** Volume id (CSIVolume) or allocation id (Allocation). */
  Key: string;
  Namespace: string;
  Index: Int;
}

/** One ndjson line: `{}` (heartbeat) or `{"Index":N,"Events":[…]}`. */
export interface WireEventFrame {
  Index?: Int;
  Events?: WireEvent[] | null;
  /** Nomad writes a frame with `Error` when the stream fails server-side. */
  Error?: string;
}
