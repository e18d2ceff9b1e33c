/**
 * Wire shapes: the JSON objects Nomad sends, built field by field in Go declaration order
 * (hashicorp/nomad nomad/structs/csi.go; test/fixtures/upstream/nomad/*.from-code.json). Every field is
 * always present.
 *
 * The CSIVolume shape includes the sanitisation of Nomad's JSON extension (`csiVolumeExt`,
 * nomad/structs/extensions.go): `Secrets` null, non-empty `MountFlags` as `["[REDACTED]"]`,
 * ReadAllocs/WriteAllocs values null, and an `Allocations` list. Copies made by the server
 * (`CSIVolume.Copy()` → `newStructs()`) turn nil Topologies/MountOptions/Parameters/Context into
 * empty values, which is why those never appear as `null`.
 */
import type { GoJSON } from './encode';
import type {
  AllocRecord,
  CSITopology,
  CSIVolume,
  NodePluginHealth,
  NodeRecord,
  PluginRecord,
  ProviderSnapshot,
  ProviderVolume,
} from './model';
import { CONTROLLER_CAPABILITY_NAMES } from './model';
import { rfc3339Nano } from './golang';

type Obj = { [field: string]: GoJSON };

function topology(t: CSITopology | null): GoJSON {
  return t === null ? null : { Segments: t.Segments };
}

function topologyList(list: Array<CSITopology | null> | null): GoJSON[] | null {
  return list === null ? null : list.map(topology);
}

function allocKeys(m: Map<string, null> | null): Map<string, GoJSON> {
  const out = new Map<string, GoJSON>();
  for (const k of m?.keys() ?? []) out.set(k, null);
  return out;
}

/** Full `CSIVolume` (GET /v1/volume/csi/:id, register/create responses, event payloads). */
export function volumeWire(v: CSIVolume, allocations: GoJSON[]): Obj {
  const mo = v.MountOptions;
  return {
    ID: v.ID,
    Name: v.Name,
    ExternalID: v.ExternalID,
    Namespace: v.Namespace,
    RequestedTopologies: v.RequestedTopologies
      ? {
          Required: topologyList(v.RequestedTopologies.Required),
          Preferred: topologyList(v.RequestedTopologies.Preferred),
        }
      : null,
    Topologies: topologyList(v.Topologies) ?? [],
    AccessMode: v.AccessMode,
    AttachmentMode: v.AttachmentMode,
    MountOptions: {
      FSType: mo?.FSType ?? '',
      MountFlags: mo?.MountFlags && mo.MountFlags.length > 0 ? ['[REDACTED]'] : (mo?.MountFlags ?? null),
    },
    Secrets: null,
    Parameters: v.Parameters ?? new Map(),
    Context: v.Context ?? new Map(),
    Capacity: v.Capacity,
    RequestedCapacityMin: v.RequestedCapacityMin,
    RequestedCapacityMax: v.RequestedCapacityMax,
    RequestedCapabilities:
      v.RequestedCapabilities === null
        ? null
        : v.RequestedCapabilities.map((c) =>
            c === null ? null : { AttachmentMode: c.AttachmentMode, AccessMode: c.AccessMode },
          ),
    CloneID: v.CloneID,
    SnapshotID: v.SnapshotID,
    ReadAllocs: allocKeys(v.ReadAllocs),
    WriteAllocs: allocKeys(v.WriteAllocs),
    Schedulable: v.Schedulable,
    PluginID: v.PluginID,
    Provider: v.Provider,
    ProviderVersion: v.ProviderVersion,
    ControllerRequired: v.ControllerRequired,
    ControllersHealthy: v.ControllersHealthy,
    ControllersExpected: v.ControllersExpected,
    NodesHealthy: v.NodesHealthy,
    NodesExpected: v.NodesExpected,
    ResourceExhausted: v.ResourceExhausted,
    CreateIndex: v.CreateIndex,
    ModifyIndex: v.ModifyIndex,
    CreateTime: v.CreateTime,
    ModifyTime: v.ModifyTime,
    Allocations: allocations,
  };
}

/** `CSIVolListStub` (list element, nomad/structs/csi.go `Stub()`). */
export function volumeStubWire(v: CSIVolume): Obj {
  return {
    ID: v.ID,
    Namespace: v.Namespace,
    Name: v.Name,
    ExternalID: v.ExternalID,
    Topologies: topologyList(v.Topologies) ?? [],
    AccessMode: v.AccessMode,
    AttachmentMode: v.AttachmentMode,
    CurrentReaders: v.ReadAllocs?.size ?? 0,
    CurrentWriters: v.WriteAllocs?.size ?? 0,
    Schedulable: v.Schedulable,
    PluginID: v.PluginID,
    Provider: v.Provider,
    ControllerRequired: v.ControllerRequired,
    ControllersHealthy: v.ControllersHealthy,
    ControllersExpected: v.ControllersExpected,
    NodesHealthy: v.NodesHealthy,
    NodesExpected: v.NodesExpected,
    ResourceExhausted: v.ResourceExhausted,
    CreateIndex: v.CreateIndex,
    ModifyIndex: v.ModifyIndex,
    CreateTime: v.CreateTime,
    ModifyTime: v.ModifyTime,
  };
}

/** `AllocListStub` as embedded in volume/plugin reads (`AllocatedResources` omitted). */
export function allocStubWire(a: AllocRecord, node: NodeRecord | undefined): Obj {
  return {
    ID: a.ID,
    EvalID: a.EvalID,
    Name: a.Name,
    Namespace: a.Namespace,
    NodeID: a.NodeID,
    NodeName: node?.Name ?? '',
    JobID: a.JobID,
    JobType: a.JobType,
    JobVersion: a.JobVersion,
    TaskGroup: a.TaskGroup,
    DesiredStatus: a.DesiredStatus,
    DesiredDescription: a.DesiredDescription,
    ClientStatus: a.ClientStatus,
    ClientDescription: a.ClientDescription,
    DesiredTransition: {
      Migrate: null,
      Reschedule: null,
      ForceReschedule: null,
      NoShutdownDelay: null,
      MigrateDisablePlacement: null,
    },
    TaskStates: null,
    DeploymentStatus: null,
    FollowupEvalID: '',
    NextAllocation: '',
    RescheduleTracker: null,
    PreemptedAllocations: null,
    PreemptedByAllocation: '',
    CreateIndex: a.CreateIndex,
    ModifyIndex: a.ModifyIndex,
    CreateTime: a.CreateTime,
    ModifyTime: a.ModifyTime,
  };
}

/** One fingerprinted plugin instance on a node (`structs.CSIInfo`). */
export interface PluginInstance {
  nodeId: string;
  allocId: string;
  healthy: boolean;
  /** Provider's id for the node (NodeInfo.ID), node plugins only. */
  externalNodeId: string;
  /** Set for an instance whose health was set on its own node (`PluginRecord.nodeHealth`). */
  own?: NodePluginHealth;
}

function csiInfoWire(p: PluginRecord, inst: PluginInstance, type: 'controller' | 'node'): Obj {
  const info: Obj = {
    PluginID: p.ID,
    AllocID: inst.allocId,
    Healthy: inst.healthy,
    HealthDescription: inst.own?.HealthDescription ?? (inst.healthy ? 'healthy' : 'unhealthy'),
    UpdateTime: rfc3339Nano(inst.own?.UpdateTime ?? p.UpdateTime),
    Provider: p.Provider,
    ProviderVersion: p.Version,
    RequiresControllerPlugin: p.ControllerRequired,
    RequiresTopologies: p.topology !== null,
  };
  if (type === 'controller') {
    const ci: Obj = {};
    for (const name of CONTROLLER_CAPABILITY_NAMES) ci[name] = p.capabilities[name];
    info.ControllerInfo = ci;
  } else {
    info.NodeInfo = {
      ID: inst.externalNodeId,
      MaxVolumes: 25,
      AccessibleTopology: p.topology === null ? null : { Segments: p.topology },
      RequiresNodeStageVolume: p.ControllerRequired,
      SupportsStats: true,
      SupportsExpand: p.capabilities.SupportsExpand,
      SupportsCondition: false,
    };
  }
  return info;
}

/** Effective plugin health counters and fingerprint instances. */
export interface PluginView {
  record: PluginRecord;
  controllers: PluginInstance[];
  nodes: PluginInstance[];
  ControllersHealthy: number;
  ControllersExpected: number;
  NodesHealthy: number;
  NodesExpected: number;
}

function jobs(p: PluginRecord, type: 'controller' | 'nodes', expected: number): Map<string, GoJSON> {
  const out = new Map<string, GoJSON>();
  if (expected <= 0) return out;
  const id = `plugin-${p.ID}-${type}`;
  out.set('default', new Map<string, GoJSON>([[id, { Namespace: 'default', ID: id, Expected: expected }]]));
  return out;
}

/** Full `CSIPlugin` (GET /v1/plugin/csi/:id). `allocations` null when not denormalised. */
export function pluginWire(view: PluginView, allocations: GoJSON[] | null): Obj {
  const p = view.record;
  const controllers = new Map<string, GoJSON>();
  for (const inst of view.controllers) controllers.set(inst.nodeId, csiInfoWire(p, inst, 'controller'));
  const nodes = new Map<string, GoJSON>();
  for (const inst of view.nodes) nodes.set(inst.nodeId, csiInfoWire(p, inst, 'node'));
  return {
    ID: p.ID,
    Provider: p.Provider,
    Version: p.Version,
    ControllerRequired: p.ControllerRequired,
    Controllers: controllers,
    Nodes: nodes,
    Allocations: allocations,
    ControllerJobs: jobs(p, 'controller', view.ControllersExpected),
    NodeJobs: jobs(p, 'nodes', view.NodesExpected),
    ControllersHealthy: view.ControllersHealthy,
    ControllersExpected: view.ControllersExpected,
    NodesHealthy: view.NodesHealthy,
    NodesExpected: view.NodesExpected,
    CreateIndex: p.CreateIndex,
    ModifyIndex: p.ModifyIndex,
    CreateTime: p.CreateTime,
    ModifyTime: p.ModifyTime,
  };
}

/** `CSIPluginListStub`. */
export function pluginStubWire(view: PluginView): Obj {
  const p = view.record;
  return {
    ID: p.ID,
    Provider: p.Provider,
    ControllerRequired: p.ControllerRequired,
    ControllersHealthy: view.ControllersHealthy,
    ControllersExpected: view.ControllersExpected,
    NodesHealthy: view.NodesHealthy,
    NodesExpected: view.NodesExpected,
    CreateIndex: p.CreateIndex,
    ModifyIndex: p.ModifyIndex,
  };
}

/** `CSIVolumeExternalStub` (GET /v1/volumes/external). */
export function externalVolumeWire(v: ProviderVolume, reportPublished: boolean): Obj {
  return {
    ExternalID: v.ExternalID,
    CapacityBytes: v.CapacityBytes,
    VolumeContext: v.VolumeContext,
    CloneID: v.CloneID,
    SnapshotID: v.SnapshotID,
    PublishedExternalNodeIDs: reportPublished ? [...v.PublishedExternalNodeIDs] : null,
    IsAbnormal: v.IsAbnormal,
    Status: v.Status,
  };
}

/** `CSISnapshot`; `pluginId` is "" in create responses and the queried plugin in lists. */
export function snapshotWire(s: ProviderSnapshot, pluginId: string, isReady: boolean): Obj {
  return {
    ID: s.ID,
    ExternalSourceVolumeID: s.ExternalSourceVolumeID,
    SizeBytes: s.SizeBytes,
    CreateTime: s.CreateTime,
    IsReady: isReady,
    SourceVolumeID: '',
    PluginID: pluginId,
    Name: '',
    Secrets: null,
    Parameters: null,
  };
}

/**
 * The `Allocation` of an Allocation-topic event (`structs.AllocationEvent`; nomad/state/events.go
 * `eventFromChange` copies the alloc and drops `Job`). Only the fields the simulator models are
 * written, in Go order; resources, metrics and task states are not simulated.
 */
export function allocEventWire(a: AllocRecord, node: NodeRecord | undefined): Obj {
  return {
    ID: a.ID,
    Namespace: a.Namespace,
    EvalID: a.EvalID,
    Name: a.Name,
    NodeID: a.NodeID,
    NodeName: node?.Name ?? '',
    JobID: a.JobID,
    Job: null,
    TaskGroup: a.TaskGroup,
    DesiredStatus: a.DesiredStatus,
    DesiredDescription: a.DesiredDescription,
    DesiredTransition: {
      Migrate: null,
      Reschedule: null,
      ForceReschedule: null,
      NoShutdownDelay: null,
      MigrateDisablePlacement: null,
    },
    ClientStatus: a.ClientStatus,
    ClientDescription: a.ClientDescription,
    TaskStates: null,
    DeploymentID: '',
    CreateIndex: a.CreateIndex,
    ModifyIndex: a.ModifyIndex,
    AllocModifyIndex: a.ModifyIndex,
    CreateTime: a.CreateTime,
    ModifyTime: a.ModifyTime,
  };
}
