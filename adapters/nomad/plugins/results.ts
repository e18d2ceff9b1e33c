/**
 * What Nomad knows beside its volumes, in the unified model: CSI plugins, the snapshots their
 * controllers hold, and provider volumes as a controller lists them (known to Nomad or not).
 */
import type { ControllerFeature, ExternalVolume, Plugin, PluginInstance, Snapshot, VolumeRef } from '../../contract/model';
import { sortedPairs } from '../../contract/key-values';
import { nonEmpty, num, secondsToIso, topology } from '../wire/scalars';
import type { WireCSIInfo, WireExternalVolume, WirePlugin, WirePluginStub, WireSnapshot } from '../wire/types';

export function toExternalVolume(backend: string, pluginId: string, w: WireExternalVolume): ExternalVolume {
  return {
    __typename: 'NomadExternalVolume',
    backend,
    pluginId,
    externalId: w.ExternalID,
    sizeBytes: num(w.CapacityBytes),
    context: sortedPairs(w.VolumeContext),
    cloneId: nonEmpty(w.CloneID),
    snapshotId: nonEmpty(w.SnapshotID),
    publishedNodeIds: w.PublishedExternalNodeIDs ?? [],
    abnormal: w.IsAbnormal,
    condition: nonEmpty(w.Status),
  };
}

/** What the caller knows of a snapshot that the wire entry may lack. */
export interface KnownSnapshot {
  /** The plugin asked (list) or used (create). */
  pluginId: string;
  /** The name asked for (create replies leave Name empty). */
  name?: string;
  /** The Nomad volume it was taken of, when known (entries name only the provider's volume). */
  sourceVolume?: VolumeRef;
}

/**
 * Snapshot entries carry only provider fields (backends.md 1.4.9): create replies have an empty
 * PluginID and Name and every entry an empty SourceVolumeID, so the caller passes what it knows.
 * Nomad has no snapshot status or description.
 */
export function toSnapshot(backend: string, w: WireSnapshot, known: KnownSnapshot): Snapshot {
  const pluginId = nonEmpty(w.PluginID) ?? known.pluginId;
  return {
    __typename: 'VolumeSnapshot',
    backend,
    scope: pluginId,
    nativeId: w.ID,
    name: nonEmpty(w.Name) ?? known.name ?? null,
    pluginId,
    sourceExternalVolumeId: nonEmpty(w.ExternalSourceVolumeID),
    sourceVolume: known.sourceVolume ?? null,
    sizeBytes: num(w.SizeBytes),
    createdAt: secondsToIso(w.CreateTime),
    ready: w.IsReady,
    backendStatus: null,
    description: null,
  };
}

export function toPluginFromStub(backend: string, w: WirePluginStub): Plugin {
  return {
    __typename: 'StoragePlugin',
    backend,
    nativeId: w.ID,
    provider: nonEmpty(w.Provider),
    controllerRequired: w.ControllerRequired,
    controllers: { healthy: w.ControllersHealthy, expected: w.ControllersExpected },
    nodes: { healthy: w.NodesHealthy, expected: w.NodesExpected },
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
      updatedAt: i.UpdateTime ?? null,
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
