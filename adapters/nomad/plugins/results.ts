/**
 * What Nomad knows beside its volumes, in the unified model: CSI plugins and provider volumes as
 * a controller lists them (known to Nomad or not). Snapshots are in `snapshots/results.ts`.
 */
import type { ControllerFeature, ExternalVolume, Plugin, PluginInstance } from '../../contract/model';
import { sortedPairs } from '../../contract/key-values';
import { nonEmpty, num, topology } from '../wire/scalars';
import type { WireCSIInfo, WireExternalVolume, WirePlugin, WirePluginStub } from '../wire/types';

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
    for (const [k, v] of Object.entries(c.ControllerInfo ?? {}))
      if (v && CONTROLLER_FEATURES[k]) features.add(CONTROLLER_FEATURES[k]);
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
