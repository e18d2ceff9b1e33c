/**
 * The cluster side that Nomad's HTTP API only observes: namespaces, nodes, plugin health,
 * allocations claiming volumes, provider-side volumes and snapshots. These are the seeding and
 * control operations of NomadSimulator; each one is a raft write (index bump, watch keys,
 * events) like the real change it stands for.
 */
import { randomUUID } from 'node:crypto';
import { applyClaim, ClaimError, copyVolume } from './claims';
import type {
  AllocRecord,
  AllocVolumeRequest,
  ControllerCapabilities,
  CSITopology,
  CSIVolume,
  CSIVolumeClaim,
  PluginRecord,
} from './model';
import { allocTerminal, ClaimMode, ClaimState } from './model';
import { validateVolume } from './routes/volumes';
import { NotFoundError, RpcError, seededUuid, volKey, type SimState } from './state';

/** Plugin definition for `addPlugin`. */
export interface PluginSpec {
  id: string;
  provider: string;
  version: string;
  controllerRequired: boolean;
  /** @default controllerRequired ? (controllersExpected ?? 1) : 0 */
  controllersHealthy?: number;
  /** @default controllersHealthy */
  controllersExpected?: number;
  /** @default nodesExpected (all node instances healthy) */
  nodesHealthy?: number;
  /** @default one node-plugin instance per simulated node (a system job) */
  nodesExpected?: number;
  /** @default all true except SupportsGetCapacity, SupportsCondition, SupportsGet */
  capabilities?: Partial<ControllerCapabilities>;
  /** Accessible topology segments of node instances / created volumes. @default none */
  topology?: Record<string, string>;
}

/** Allocation definition for `placeAllocation`. */
export interface AllocationSpec {
  /** @default a random UUID */
  id?: string;
  /** @default 'default' */
  namespace?: string;
  jobId: string;
  /** @default jobId */
  taskGroup?: string;
  /** @default `${jobId}.${taskGroup}[0]` */
  name?: string;
  nodeId: string;
  /** @default 'running' */
  clientStatus?: 'pending' | 'running';
  volumes: Array<{ volumeId: string; mode: 'read' | 'write'; accessMode?: string; attachmentMode?: string }>;
}

const DEFAULT_CAPS: ControllerCapabilities = {
  SupportsCreateDelete: true,
  SupportsAttachDetach: true,
  SupportsListVolumes: true,
  SupportsGetCapacity: false,
  SupportsCreateDeleteSnapshot: true,
  SupportsListSnapshots: true,
  SupportsClone: true,
  SupportsReadOnlyAttach: true,
  SupportsExpand: true,
  SupportsListVolumesAttachedNodes: true,
  SupportsCondition: false,
  SupportsGet: false,
};

const CLIENT_DESCRIPTIONS: Record<string, string> = {
  pending: 'No tasks have started',
  running: 'Tasks are running',
  complete: 'All tasks have completed',
  failed: 'Failed tasks',
  lost: 'alloc is lost since its node is down',
  unknown: 'alloc is unknown since its node is disconnected',
};

const DESIRED_DESCRIPTIONS: Record<string, string> = {
  run: '',
  stop: 'alloc not needed due to job update',
  evict: 'alloc was preempted',
};

export function addNamespace(st: SimState, name: string): void {
  st.apply((index) => {
    if (!st.namespaces.has(name)) st.namespaces.set(name, { Name: name, CreateIndex: index });
    return { tables: ['namespaces'] };
  });
}

export function addNode(st: SimState, n: { id: string; name: string }): void {
  st.apply((index) => {
    st.nodes.set(n.id, { ID: n.id, Name: n.name, Status: 'ready', CreateIndex: index });
    // Node registration fingerprints the node plugins of system-job plugins.
    const touched = st.touchSystemPlugins(index);
    return {
      tables: touched.keys.length > 0 ? ['nodes', 'csi_plugins'] : ['nodes'],
      keys: touched.keys,
      events: touched.events,
    };
  });
}

export function addPlugin(st: SimState, spec: PluginSpec): void {
  const controllersHealthy = spec.controllersHealthy ?? (spec.controllerRequired ? (spec.controllersExpected ?? 1) : 0);
  st.apply((index) => {
    const now = st.now();
    const old = st.plugins.get(spec.id);
    const rec: PluginRecord = {
      ID: spec.id,
      Provider: spec.provider,
      Version: spec.version,
      ControllerRequired: spec.controllerRequired,
      ControllersHealthy: controllersHealthy,
      ControllersExpected: spec.controllersExpected ?? controllersHealthy,
      NodesHealthy: spec.nodesHealthy ?? null,
      NodesExpected: spec.nodesExpected ?? (spec.nodesHealthy !== undefined ? spec.nodesHealthy : null),
      capabilities: { ...DEFAULT_CAPS, ...spec.capabilities },
      topology: spec.topology ? new Map(Object.entries(spec.topology)) : null,
      CreateIndex: old?.CreateIndex ?? index,
      ModifyIndex: index,
      CreateTime: old?.CreateTime ?? now,
      ModifyTime: now,
      UpdateTime: now,
      nodeHealth: new Map(),
    };
    st.plugins.set(spec.id, rec);
    return { tables: ['csi_plugins'], keys: [`plugin:${spec.id}`], events: st.pluginEvent(spec.id, index) };
  });
  st.provider(spec.id);
}

export function setPluginHealth(
  st: SimState,
  id: string,
  h: { controllersHealthy?: number; nodesHealthy?: number },
): void {
  const p = st.plugins.get(id);
  if (!p) throw new NotFoundError(`plugin not found: ${id}`);
  st.apply((index) => {
    if (h.controllersHealthy !== undefined) p.ControllersHealthy = h.controllersHealthy;
    if (h.nodesHealthy !== undefined) p.NodesHealthy = h.nodesHealthy;
    p.ModifyIndex = index;
    p.ModifyTime = st.now();
    p.UpdateTime = p.ModifyTime;
    return { tables: ['csi_plugins'], keys: [`plugin:${id}`], events: st.pluginEvent(id, index) };
  });
}

function toMap(o: unknown): Map<string, string> | null {
  if (o === null || o === undefined) return null;
  if (Object.prototype.toString.call(o) === '[object Map]') return new Map(o as Map<string, string>);
  return new Map(Object.entries(o as Record<string, string>).map(([k, v]) => [k, String(v)]));
}

function toTopologies(o: unknown): Array<CSITopology | null> | null {
  if (o === null || o === undefined) return null;
  return (o as Array<{ Segments?: unknown } | null>).map((t) => (t === null ? null : { Segments: toMap(t.Segments) }));
}

function toBig(o: unknown, dflt = 0n): bigint {
  if (o === undefined || o === null) return dflt;
  return BigInt(o as bigint | number | string);
}

/** A seeded string field: absent is `dflt`, a scalar is spelled out; an object is a seeding mistake. */
function str(o: unknown, dflt = ''): string {
  if (o === undefined || o === null) return dflt;
  if (typeof o === 'string') return o;
  if (typeof o === 'number' || typeof o === 'bigint' || typeof o === 'boolean') return String(o);
  throw new TypeError(`a seeded volume's string field holds ${typeof o}`);
}

/**
 * Stores a volume as if registered (hashicorp/nomad nomad/csi_endpoint.go `Register`):
 * Nomad-controlled fields keep their request zero values; health is denormalised at read time. Also
 * creates the provider-side volume for ExternalID if the plugin's storage lacks it.
 */
export function seedVolume(st: SimState, input: Record<string, unknown>): void {
  const pluginId = str(input.PluginID);
  const view = st.pluginView(pluginId);
  if (!view) throw new NotFoundError(`no CSI plugin named: ${pluginId} could be found`);
  const rt = input.RequestedTopologies as { Required?: unknown; Preferred?: unknown } | null | undefined;
  const mo = input.MountOptions as { FSType?: string; MountFlags?: string[] | null } | null | undefined;
  const caps = input.RequestedCapabilities as Array<{ AccessMode?: string; AttachmentMode?: string }> | undefined;
  const min = toBig(input.RequestedCapacityMin);
  const v: CSIVolume = {
    ID: str(input.ID),
    Name: str(input.Name, str(input.ID)),
    ExternalID: str(input.ExternalID),
    Namespace: str(input.Namespace, 'default'),
    RequestedTopologies: rt ? { Required: toTopologies(rt.Required), Preferred: toTopologies(rt.Preferred) } : null,
    Topologies: toTopologies(input.Topologies),
    AccessMode: '',
    AttachmentMode: '',
    MountOptions: mo ? { FSType: mo.FSType ?? '', MountFlags: mo.MountFlags ?? null } : null,
    Secrets: toMap(input.Secrets),
    Parameters: toMap(input.Parameters),
    Context: toMap(input.Context),
    Capacity: toBig(input.Capacity, min),
    RequestedCapacityMin: min,
    RequestedCapacityMax: toBig(input.RequestedCapacityMax),
    RequestedCapabilities: (caps ?? [{ AccessMode: 'single-node-writer', AttachmentMode: 'file-system' }]).map((c) => ({
      AccessMode: c.AccessMode ?? '',
      AttachmentMode: c.AttachmentMode ?? '',
    })),
    CloneID: str(input.CloneID),
    SnapshotID: str(input.SnapshotID),
    ReadAllocs: null,
    WriteAllocs: null,
    ReadClaims: null,
    WriteClaims: null,
    PastClaims: null,
    Schedulable: false,
    PluginID: pluginId,
    Provider: view.record.Provider,
    ProviderVersion: view.record.Version,
    ControllerRequired: false,
    ControllersHealthy: 0,
    ControllersExpected: 0,
    NodesHealthy: 0,
    NodesExpected: 0,
    ResourceExhausted: null,
    CreateIndex: 0,
    ModifyIndex: 0,
    CreateTime: 0n,
    ModifyTime: 0n,
  };
  const invalid = validateVolume(v);
  if (invalid) throw new Error(invalid);
  if ((v.Topologies?.length ?? 0) === 0 && v.RequestedTopologies) v.Topologies = v.RequestedTopologies.Required;
  if (v.ExternalID !== '') {
    const provider = st.provider(pluginId);
    if (!provider.volumes.has(v.ExternalID)) {
      provider.putVolume({
        ExternalID: v.ExternalID,
        CapacityBytes: v.Capacity,
        VolumeContext: v.Context,
        CloneID: v.CloneID,
        SnapshotID: v.SnapshotID,
        PublishedExternalNodeIDs: [],
        IsAbnormal: false,
        Status: '',
      });
    }
  }
  try {
    st.upsertVolumes([v]);
  } catch (e) {
    if (e instanceof RpcError) throw new Error(e.message, { cause: e });
    throw e;
  }
}

export function addExternalVolume(
  st: SimState,
  pluginId: string,
  v: {
    ExternalID: string;
    CapacityBytes: number | bigint;
    PublishedExternalNodeIDs?: string[];
    Status?: string;
    IsAbnormal?: boolean;
  },
): void {
  if (!st.plugins.has(pluginId)) throw new NotFoundError(`plugin not found: ${pluginId}`);
  st.provider(pluginId).putVolume({
    ExternalID: v.ExternalID,
    CapacityBytes: BigInt(v.CapacityBytes),
    VolumeContext: null,
    CloneID: '',
    SnapshotID: '',
    PublishedExternalNodeIDs: [...(v.PublishedExternalNodeIDs ?? [])],
    IsAbnormal: v.IsAbnormal ?? false,
    Status: v.Status ?? '',
  });
}

export function addSnapshot(
  st: SimState,
  pluginId: string,
  s: { ID: string; ExternalSourceVolumeID: string; SizeBytes: number | bigint; CreateTime?: number; IsReady?: boolean },
): void {
  if (!st.plugins.has(pluginId)) throw new NotFoundError(`plugin not found: ${pluginId}`);
  st.provider(pluginId).putSnapshot({
    ID: s.ID,
    ExternalSourceVolumeID: s.ExternalSourceVolumeID,
    SizeBytes: BigInt(s.SizeBytes),
    CreateTime: BigInt(s.CreateTime ?? Math.floor(Date.now() / 1000)),
    IsReady: s.IsReady ?? true,
    readyAt: s.IsReady === false ? Number.POSITIVE_INFINITY : 0,
  });
}

/**
 * Places a running (or pending) allocation and makes its volume claims, applying Nomad's claim
 * rules first (all or nothing); controller plugins with ATTACH_DETACH publish the volume to the
 * node in the provider.
 */
export function placeAllocation(st: SimState, spec: AllocationSpec): string {
  const id = spec.id ?? randomUUID();
  const ns = spec.namespace ?? 'default';
  if (!st.namespaces.has(ns)) throw new NotFoundError(`namespace not found: ${ns}`);
  const node = st.nodes.get(spec.nodeId);
  if (!node) throw new NotFoundError(`node not found: ${spec.nodeId}`);
  if (st.allocs.has(id)) throw new Error(`allocation already exists: ${id}`);
  const taskGroup = spec.taskGroup ?? spec.jobId;

  const claims: Array<{ volumeId: string; claim: CSIVolumeClaim }> = [];
  const requests: AllocVolumeRequest[] = [];
  const staged = new Map<string, CSIVolume>();
  for (const r of spec.volumes) {
    const stored = st.getVolume(ns, r.volumeId);
    if (!stored) throw new ClaimError(`volume not found: ${r.volumeId}`);
    const cap = stored.RequestedCapabilities?.find((c) => c !== null) ?? null;
    const plugin = st.plugins.get(stored.PluginID);
    const claim: CSIVolumeClaim = {
      AllocationID: id,
      NodeID: node.ID,
      ExternalNodeID: plugin ? st.externalNodeId(plugin, node.ID) : node.Name,
      Mode: r.mode === 'write' ? ClaimMode.Write : ClaimMode.Read,
      AccessMode: r.accessMode ?? (stored.AccessMode || cap?.AccessMode || ''),
      AttachmentMode: r.attachmentMode ?? (stored.AttachmentMode || cap?.AttachmentMode || ''),
      State: ClaimState.Taken,
    };
    // Dry run on copies so a rejected claim leaves nothing behind.
    const key = volKey(ns, r.volumeId);
    const trial = staged.get(key) ?? st.denormalizePlugins(copyVolume(stored));
    applyClaim(trial, { ...claim }, true);
    staged.set(key, trial);
    claims.push({ volumeId: r.volumeId, claim });
    requests.push({
      Source: r.volumeId,
      ReadOnly: r.mode === 'read',
      AccessMode: claim.AccessMode,
      AttachmentMode: claim.AttachmentMode,
    });
  }

  const clientStatus = spec.clientStatus ?? 'running';
  st.apply((index) => {
    const now = st.now();
    const alloc: AllocRecord = {
      ID: id,
      EvalID: seededUuid(`${id}/eval`),
      Name: spec.name ?? `${spec.jobId}.${taskGroup}[0]`,
      Namespace: ns,
      NodeID: node.ID,
      JobID: spec.jobId,
      JobType: 'service',
      JobVersion: 0,
      TaskGroup: taskGroup,
      DesiredStatus: 'run',
      DesiredDescription: '',
      ClientStatus: clientStatus,
      ClientDescription: CLIENT_DESCRIPTIONS[clientStatus] ?? '',
      CreateIndex: index,
      ModifyIndex: index,
      CreateTime: now,
      ModifyTime: now,
      volumes: requests,
    };
    st.allocs.set(id, alloc);
    return {
      tables: ['allocs'],
      keys: [`alloc:${id}`, `node_allocs:${node.ID}`],
      events: [st.allocEvent('PlanResult', alloc, index)],
    };
  });

  for (const { volumeId, claim } of claims) {
    st.claimVolumes([{ ns, volumeId, claim }]);
    const vol = st.getVolume(ns, volumeId)!;
    const view = st.pluginView(vol.PluginID);
    if (view && view.record.ControllerRequired && st.pluginHasCapability(view, 'SupportsAttachDetach')) {
      st.provider(vol.PluginID).publish(vol.ExternalID || vol.ID, claim.ExternalNodeID);
    }
  }
  return id;
}

/**
 * Changes an allocation's statuses. Becoming terminal (client complete/failed/lost or desired
 * stop/evict) hands its claims to the simulated volume watcher.
 */
export function setAllocationStatus(
  st: SimState,
  id: string,
  s: { clientStatus?: string; desiredStatus?: string },
): void {
  const a = st.allocs.get(id);
  if (!a) throw new NotFoundError(`allocation not found: ${id}`);
  const wasTerminal = allocTerminal(a);
  st.apply((index) => {
    if (s.clientStatus !== undefined) {
      a.ClientStatus = s.clientStatus;
      a.ClientDescription = CLIENT_DESCRIPTIONS[s.clientStatus] ?? '';
    }
    if (s.desiredStatus !== undefined) {
      a.DesiredStatus = s.desiredStatus;
      a.DesiredDescription = DESIRED_DESCRIPTIONS[s.desiredStatus] ?? '';
    }
    a.ModifyIndex = index;
    a.ModifyTime = st.now();
    // A client status comes from the node (AllocClientUpdate); a desired status alone from the
    // scheduler's plan (stop, evict).
    const type = s.clientStatus !== undefined ? 'AllocationUpdated' : 'PlanResult';
    return {
      tables: ['allocs'],
      keys: [`alloc:${id}`, `node_allocs:${a.NodeID}`],
      events: [st.allocEvent(type, a, index)],
    };
  });
  if (!wasTerminal && allocTerminal(a)) st.releaseAllocClaims(id);
}

/** Garbage-collects an allocation; an unreleased claim stays as a key until the watcher frees it. */
export function gcAllocation(st: SimState, id: string): void {
  const a = st.allocs.get(id);
  if (!a) throw new NotFoundError(`allocation not found: ${id}`);
  st.apply(() => {
    st.allocs.delete(id);
    return { tables: ['allocs'], keys: [`alloc:${id}`, `node_allocs:${a.NodeID}`] };
  });
  if (st.volumesClaimedBy(id).length > 0) st.releaseAllocClaims(id);
}
