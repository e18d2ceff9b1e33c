/** The unified model's Nomad-only parts: volume details, CSI plugins, provider volumes, node references. */
import type { AccessMode, AttachmentMode, HealthCount, KeyValue, RequestedCapability, Topology, VolumeRef } from './contract/model';

/** What Nomad says of a CSI volume. The list-stub part is always here; `full` needs a read. */
export interface NomadVolumeDetails {
  __typename: 'NomadVolumeDetails';
  /** The volume these details belong to (its full part loads by it). */
  ref: VolumeRef;
  /** The storage provider's id (e.g. an EBS volume id). */
  externalId: string | null;
  pluginId: string | null;
  provider: string | null;
  schedulable: boolean | null;
  /** Mode of the current claims; null when idle. */
  accessMode: AccessMode | null;
  attachmentMode: AttachmentMode | null;
  topologies: Topology[];
  controllerRequired: boolean | null;
  controllers: HealthCount | null;
  nodes: HealthCount | null;
  currentReaders: number;
  currentWriters: number;
  /** Nomad's Raft indexes (kept here, never in the core). */
  createIndex: number | null;
  modifyIndex: number | null;
  /** Null on list stubs. */
  full: NomadVolumeFull | null;
}

/** The part of a Nomad volume only a full read has. */
export interface NomadVolumeFull {
  requestedCapacityMinBytes: number | null;
  requestedCapacityMaxBytes: number | null;
  requestedCapabilities: RequestedCapability[];
  requestedTopologies: { required: Topology[]; preferred: Topology[] } | null;
  providerVersion: string | null;
  /** Flags are redacted by the backend; the gateway never un-redacts. */
  mountOptions: { fsType: string | null; mountFlags: string[] } | null;
  parameters: KeyValue[];
  context: KeyValue[];
  cloneId: string | null;
  snapshotId: string | null;
}

/** A volume as the storage provider (CSI controller plugin) sees it, known to the backend or not. */
export interface ExternalVolume {
  __typename: 'NomadExternalVolume';
  backend: string;
  pluginId: string;
  externalId: string;
  sizeBytes: number | null;
  context: KeyValue[];
  cloneId: string | null;
  snapshotId: string | null;
  publishedNodeIds: string[];
  abnormal: boolean;
  condition: string | null;
}

/** Controller capabilities a CSI plugin reports. */
export type ControllerFeature =
  | 'CREATE_DELETE'
  | 'ATTACH_DETACH'
  | 'LIST_VOLUMES'
  | 'GET_CAPACITY'
  | 'CREATE_DELETE_SNAPSHOT'
  | 'LIST_SNAPSHOTS'
  | 'CLONE'
  | 'READ_ONLY_ATTACH'
  | 'EXPAND'
  | 'LIST_VOLUMES_PUBLISHED_NODES'
  | 'CONDITION'
  | 'GET';

/** One running instance of a plugin on a node. */
export interface PluginInstance {
  role: 'CONTROLLER' | 'NODE';
  nodeId: string;
  allocationId: string | null;
  healthy: boolean;
  healthDescription: string | null;
  updatedAt: string | null;
  providerVersion: string | null;
  /** Provider's node id (NODE role only). */
  providerNodeId: string | null;
  maxVolumes: number | null;
  accessibleTopology: Topology | null;
}

/** A storage plugin (CSI) of a backend. */
export interface Plugin {
  __typename: 'StoragePlugin';
  backend: string;
  nativeId: string;
  provider: string | null;
  controllerRequired: boolean | null;
  controllers: HealthCount;
  nodes: HealthCount;
  /** Present after a full read. */
  detail?: PluginDetail;
}

/** The part of a plugin only a full read has. */
export interface PluginDetail {
  version: string | null;
  controllerFeatures: ControllerFeature[];
  instances: PluginInstance[];
}

/** A Nomad client node referenced by key (an entity a scheduler subgraph may own). */
export interface NomadNodeRef {
  __typename: 'NomadNode';
  /** The Nomad node id. */
  id: string;
}
