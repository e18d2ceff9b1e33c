/**
 * The unified model: what every backend adapter maps its wire shapes to, and what the GraphQL
 * schema speaks. Names are the gateway's, not any backend's.
 */

/** Which family of API a backend speaks. */
export type BackendKind = 'NOMAD' | 'OPENSTACK';

/** Things a backend may or may not be able to do; `Backend.capabilities` lists them. */
export type Capability =
  | 'LIST_VOLUMES'
  | 'READ_VOLUME'
  | 'REGISTER_VOLUME'
  | 'DEREGISTER_VOLUME'
  | 'CREATE_VOLUME'
  | 'DELETE_VOLUME'
  | 'ATTACH_VOLUME'
  | 'DETACH_VOLUME'
  | 'EXTEND_VOLUME'
  | 'LIST_EXTERNAL_VOLUMES'
  | 'CREATE_SNAPSHOT'
  | 'DELETE_SNAPSHOT'
  | 'LIST_SNAPSHOTS'
  | 'LIST_PLUGINS'
  | 'UPDATE_VOLUME'
  | 'REVERT_VOLUME'
  | 'HOST_ATTACHMENTS'
  | 'SERVER_ATTACHMENTS'
  | 'VOLUME_ACTIONS'
  | 'TRACKED_OPERATIONS';

/** One status vocabulary for every backend; mapping tables live in each adapter's `results.ts`. */
export type VolumeStatus =
  | 'CREATING'
  | 'AVAILABLE'
  | 'RESERVED'
  | 'ATTACHING'
  | 'IN_USE'
  | 'DETACHING'
  | 'EXTENDING'
  | 'DELETING'
  | 'MAINTENANCE'
  | 'BUSY'
  | 'UNAVAILABLE'
  | 'ERROR'
  | 'UNKNOWN';

/** State of one attachment (Nomad claim, Cinder attachment, Nova volume attachment). */
export type AttachmentState = 'ATTACHING' | 'ATTACHED' | 'DETACHING' | 'DETACHED' | 'ERROR';

export type AccessMode =
  | 'SINGLE_NODE_READER_ONLY'
  | 'SINGLE_NODE_WRITER'
  | 'MULTI_NODE_READER_ONLY'
  | 'MULTI_NODE_SINGLE_WRITER'
  | 'MULTI_NODE_MULTI_WRITER';

export type AttachmentMode = 'FILE_SYSTEM' | 'BLOCK_DEVICE';

/** Whether a consumer reads or writes through an attachment. */
export type AttachmentAccess = 'READ_ONLY' | 'READ_WRITE';

export interface KeyValue {
  key: string;
  value: string;
}

/** A topology segment set, e.g. `{ key: "topology.ebs.csi.aws.com/zone", value: "us-east-1a" }`. */
export interface Topology {
  segments: KeyValue[];
}

/** An access/attachment mode pair a volume was requested with. */
export interface RequestedCapability {
  accessMode: AccessMode | null;
  attachmentMode: AttachmentMode | null;
}

export interface HealthCount {
  healthy: number;
  expected: number;
}

/** Identifies a volume within the gateway. */
export interface VolumeRef {
  backend: string;
  /** Nomad namespace or OpenStack project id. */
  namespace: string;
  nativeId: string;
}

/** Fields a backend's list call already has. */
export interface Volume {
  ref: VolumeRef;
  externalId: string | null;
  name: string;
  status: VolumeStatus;
  /** The backend's own status, or for backends without one a documented summary. */
  backendStatus: string | null;
  accessMode: AccessMode | null;
  attachmentMode: AttachmentMode | null;
  topologies: Topology[];
  schedulable: boolean | null;
  pluginId: string | null;
  provider: string | null;
  controllerRequired: boolean | null;
  controllers: HealthCount | null;
  nodes: HealthCount | null;
  currentReaders: number;
  currentWriters: number;
  createIndex: number | null;
  modifyIndex: number | null;
  /** RFC 3339 with nanoseconds; null when the backend never set it. */
  createTime: string | null;
  modifyTime: string | null;
  /** Present when the volume came from a full read; list stubs lack it. */
  detail?: VolumeDetail;
  /** OpenStack (Cinder) fields; absent on other backends. */
  openstack?: OpenStackVolumeFields;
}

/** Cinder's own volume fields that have no counterpart on other backends. */
export interface OpenStackVolumeFields {
  sizeGiB: number;
  description: string | null;
  volumeType: string | null;
  availabilityZone: string | null;
  bootable: boolean;
  encrypted: boolean;
  multiattach: boolean;
  metadata: KeyValue[];
  /** Glance metadata copied to the volume (show/detail only). */
  imageMetadata: KeyValue[];
  /** Admin only; null otherwise. */
  migrationStatus: string | null;
  replicationStatus: string | null;
  /** `readonly` admin metadata is exposed as metadata `readonly=True` by Cinder. */
  userId: string | null;
}

/** Fields only a full read has (Nomad list stubs carry no allocations, capacity, options …). */
export interface VolumeDetail {
  capacityBytes: number | null;
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
  attachments: Attachment[];
}

/** A Nomad allocation consuming a volume through a claim. */
export interface NomadAllocationConsumer {
  kind: 'NomadAllocation';
  id: string;
  /** Null when the allocation was garbage-collected while its claim is still held. */
  name: string | null;
  namespace: string | null;
  jobId: string | null;
  jobType: string | null;
  taskGroup: string | null;
  nodeId: string | null;
  nodeName: string | null;
  clientStatus: string | null;
  desiredStatus: string | null;
  createTime: string | null;
  modifyTime: string | null;
}

/** An OpenStack (Nova) server; its name and state are read from Nova when asked. */
export interface OpenStackServerConsumer {
  kind: 'OpenStackServer';
  id: string;
}

/** A host attached through Cinder's attachments API or legacy os-attach with a host name. */
export interface OpenStackHostConsumer {
  kind: 'OpenStackHost';
  /** Null unless the caller is an admin or service (Cinder hides it otherwise). */
  hostName: string | null;
}

export type AttachmentConsumer = NomadAllocationConsumer | OpenStackServerConsumer | OpenStackHostConsumer;

/** Where and how a volume is attached (OpenStack). */
export interface AttachmentPlacement {
  device: string | null;
  attachedAt: string | null;
  /** Nova ≥ 2.70. */
  tag?: string | null;
  /** Nova ≥ 2.79. */
  deleteOnTermination?: boolean | null;
}

export interface Attachment {
  volume: VolumeRef;
  /** The consumer's native id (Nomad allocation id …). */
  consumerId: string;
  state: AttachmentState;
  /** The backend's own word for the consumer's or attachment's state. */
  backendState: string | null;
  access: AttachmentAccess;
  consumer: AttachmentConsumer;
  /** OpenStack only. */
  placement?: AttachmentPlacement;
}

export interface Snapshot {
  backend: string;
  /** Nomad: the plugin id (snapshots are addressed by plugin). */
  scope: string;
  nativeId: string;
  name: string | null;
  pluginId: string | null;
  /** The provider's id of the source volume. */
  sourceExternalVolumeId: string | null;
  sizeBytes: number | null;
  createTime: string | null;
  ready: boolean | null;
  /** OpenStack: the source volume (Cinder snapshots belong to a volume). */
  sourceVolume?: VolumeRef;
  /** OpenStack: Cinder's snapshot status. */
  backendStatus?: string | null;
  description?: string | null;
}

/** An OpenStack (Nova) server. */
export interface OpenStackServer {
  backend: string;
  projectId: string;
  id: string;
  name: string;
  status: string;
  vmState: string | null;
  /** Volume ids Nova lists for it (`os-extended-volumes:volumes_attached`). */
  volumeIds: string[];
  createTime: string | null;
}

/** A server's volume attachment as Nova reports it. */
export interface ServerVolumeAttachment {
  backend: string;
  projectId: string;
  serverId: string;
  volumeId: string;
  device: string | null;
  tag: string | null;
  deleteOnTermination: boolean | null;
  /** Cinder attachment id (Nova ≥ 2.89). */
  attachmentId: string | null;
}

/** A volume as the storage provider (CSI controller plugin) sees it, known to the backend or not. */
export interface ExternalVolume {
  backend: string;
  pluginId: string;
  externalId: string;
  capacityBytes: number | null;
  context: KeyValue[];
  cloneId: string | null;
  snapshotId: string | null;
  publishedNodeIds: string[];
  abnormal: boolean;
  condition: string | null;
}

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

export interface PluginInstance {
  role: 'CONTROLLER' | 'NODE';
  nodeId: string;
  allocationId: string | null;
  healthy: boolean;
  healthDescription: string | null;
  updateTime: string | null;
  providerVersion: string | null;
  /** Provider's node id (NODE role only). */
  providerNodeId: string | null;
  maxVolumes: number | null;
  accessibleTopology: Topology | null;
}

export interface Plugin {
  backend: string;
  nativeId: string;
  provider: string | null;
  controllerRequired: boolean | null;
  controllers: HealthCount;
  nodes: HealthCount;
  createIndex: number | null;
  modifyIndex: number | null;
  /** Present after a full read. */
  detail?: PluginDetail;
}

export interface PluginDetail {
  version: string | null;
  controllerFeatures: ControllerFeature[];
  instances: PluginInstance[];
}

export type BackendHealthStatus = 'UP' | 'DOWN';

export interface BackendHealth {
  status: BackendHealthStatus;
  /** Round trip of the probe in milliseconds; null when it failed before an answer. */
  latencyMs: number | null;
  message: string | null;
  checkedAt: string;
}
