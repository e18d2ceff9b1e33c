/**
 * Storage plugins (CSI) and the volumes their controllers know: what the `storagePlugins` facet
 * (capabilities.ts) reads. CSI's vocabulary, not one backend's.
 */
import type { HealthCount, KeyValue, Topology } from './model-shared';

/** A volume as the storage provider (CSI controller plugin) sees it, known to the backend or not. */
export interface ExternalVolume {
  /** The GraphQL type the backend's module gives its provider volumes. */
  __typename: string;
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
  /** The GraphQL type the backend's module gives its plugins. */
  __typename: string;
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
