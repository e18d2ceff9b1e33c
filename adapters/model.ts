/**
 * The unified model (v2): what every backend adapter maps its wire shapes to, and what the GraphQL
 * schema speaks. Names are the gateway's, never a backend's. Objects that become GraphQL objects
 * carry their GraphQL `__typename`, so abstract types resolve by name and never by shape.
 *
 * Conventions: sizes are bytes (`…Bytes`), times are RFC 3339 strings (`…At`), and a `null` means
 * "the backend has no value". A value that the object does not hold yet (a Nomad list stub has no
 * attachments) is signalled by `complete: false`, never by `null`.
 */

/** Which family of API a backend speaks. */
export type BackendKind = 'NOMAD' | 'OPENSTACK';

/** Things a backend may or may not be able to do; `StorageBackend.capabilities` lists them. */
export type Capability =
  | 'LIST_VOLUMES'
  | 'READ_VOLUME'
  | 'CREATE_VOLUME'
  | 'DELETE_VOLUME'
  | 'ATTACH_VOLUME'
  | 'DETACH_VOLUME'
  | 'EXTEND_VOLUME'
  | 'UPDATE_VOLUME'
  | 'LIST_SNAPSHOTS'
  | 'READ_SNAPSHOT'
  | 'CREATE_SNAPSHOT'
  | 'DELETE_SNAPSHOT'
  | 'REVERT_VOLUME'
  | 'REGISTER_VOLUME'
  | 'LIST_EXTERNAL_VOLUMES'
  | 'LIST_PLUGINS'
  | 'HOST_ATTACHMENTS'
  | 'SERVER_ATTACHMENTS'
  | 'VOLUME_ACTIONS'
  | 'TRACKED_OPERATIONS';

/** One status vocabulary for every backend; mapping tables live in each adapter's `results` modules. */
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

/** CSI access modes. */
export type AccessMode =
  | 'SINGLE_NODE_READER_ONLY'
  | 'SINGLE_NODE_WRITER'
  | 'MULTI_NODE_READER_ONLY'
  | 'MULTI_NODE_SINGLE_WRITER'
  | 'MULTI_NODE_MULTI_WRITER';

/** CSI attachment modes. */
export type AttachmentMode = 'FILE_SYSTEM' | 'BLOCK_DEVICE';

/** Whether a consumer reads or writes through an attachment. */
export type AttachmentAccess = 'READ_ONLY' | 'READ_WRITE';

/** A string pair (metadata, parameters, topology segments). */
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

/** Healthy out of expected plugin instances. */
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

/** A volume on any backend: the core every backend has, plus its backend's typed details. */
export interface Volume {
  __typename: 'Volume';
  ref: VolumeRef;
  name: string;
  status: VolumeStatus;
  /** The backend's own status, or for backends without one a documented summary. */
  backendStatus: string | null;
  /** Provisioned size; null when the backend reports none. Meaningful only when `complete`. */
  sizeBytes: number | null;
  createdAt: string | null;
  updatedAt: string | null;
  /**
   * True when this came from a full read. False for list stubs (Nomad), whose `sizeBytes`,
   * `attachments` and the full part of their details need a read.
   */
  complete: boolean;
  /** Consumers holding the volume. Meaningful only when `complete`. */
  attachments: Attachment[];
  details: VolumeDetails;
}

/** The backend-specific part of a volume; a third backend adds a member. */
export type VolumeDetails = NomadVolumeDetails | CinderVolumeDetails;

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

/** Cinder's statuses, one-to-one with the wire words (the adapter maps them). */
export type CinderVolumeStatus =
  | 'CREATING'
  | 'AVAILABLE'
  | 'RESERVED'
  | 'ATTACHING'
  | 'DETACHING'
  | 'IN_USE'
  | 'MAINTENANCE'
  | 'DELETING'
  | 'AWAITING_TRANSFER'
  | 'ERROR'
  | 'ERROR_DELETING'
  | 'BACKING_UP'
  | 'RESTORING_BACKUP'
  | 'ERROR_BACKING_UP'
  | 'ERROR_RESTORING'
  | 'ERROR_EXTENDING'
  | 'DOWNLOADING'
  | 'UPLOADING'
  | 'RETYPING'
  | 'EXTENDING'
  | 'ERROR_MANAGING'
  | 'MANAGING'
  | 'REVERTING'
  | 'OTHER';

/** What Cinder says of a volume that other backends have no word for. */
export interface CinderVolumeDetails {
  __typename: 'CinderVolumeDetails';
  /** Cinder's status as a typed value (`OTHER` for a word this gateway does not know; `backendStatus` keeps it). */
  cinderStatus: CinderVolumeStatus;
  /** Cinder counts in whole GiB. */
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
  userId: string | null;
  /** Cinder id of the snapshot it was created from. */
  snapshotId: string | null;
  /** Cinder id of the volume it was cloned from. */
  sourceVolumeId: string | null;
}

/** A Nomad allocation holding a claim, as the volume read shows it. */
export interface AllocationConsumer {
  __typename: 'VolumeAllocationConsumer';
  allocationId: string;
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
  createdAt: string | null;
  updatedAt: string | null;
}

/** An OpenStack (Nova) server; its name and state are read from Nova when asked. */
export interface ServerConsumer {
  __typename: 'VolumeServerConsumer';
  serverId: string;
  /** The OpenStack backend whose Nova reports it. */
  backend: string;
}

/** A host attached through Cinder's attachments API or legacy os-attach with a host name. */
export interface HostConsumer {
  __typename: 'VolumeHostConsumer';
  /** Null unless the caller is an admin or service (Cinder hides it otherwise). */
  hostName: string | null;
}

export type AttachmentConsumer = AllocationConsumer | ServerConsumer | HostConsumer;

/** Joins a volume to its consumer. */
export interface Attachment {
  __typename: 'VolumeAttachment';
  volume: VolumeRef;
  /** The consumer's native id (Nomad allocation id, Nova server id, Cinder attachment id for hosts). */
  consumerId: string;
  state: AttachmentState;
  /** The backend's own word for the consumer's or attachment's state. */
  backendState: string | null;
  /** Why the state is ERROR, e.g. two services disagree (Nova lists it, Cinder does not). */
  stateReason: string | null;
  access: AttachmentAccess;
  consumer: AttachmentConsumer;
  /** Device path on the consumer (OpenStack). */
  device: string | null;
  attachedAt: string | null;
  /** The backend's attachment record id (Cinder attachment uuid); null where there is none. */
  nativeId: string | null;
  /** Nova ≥ 2.70: the device tag. */
  tag: string | null;
  /** Nova ≥ 2.79: delete the volume with the server. */
  deleteOnTermination: boolean | null;
}

/** A snapshot: of a plugin's volume (Nomad) or of a Cinder volume. */
export interface Snapshot {
  __typename: 'VolumeSnapshot';
  backend: string;
  /** Nomad: the plugin id (snapshots are addressed by plugin); OpenStack: the project id. */
  scope: string;
  nativeId: string;
  name: string | null;
  /** Nomad: the plugin that holds it. */
  pluginId: string | null;
  /** The provider's id of the source volume. */
  sourceExternalVolumeId: string | null;
  /** OpenStack: the source volume. */
  sourceVolume: VolumeRef | null;
  sizeBytes: number | null;
  createdAt: string | null;
  ready: boolean | null;
  /** The backend's own status (Cinder's snapshot status); null on Nomad. */
  backendStatus: string | null;
  description: string | null;
}

/** An OpenStack (Nova) server as Nova shows it. */
export interface NovaServer {
  backend: string;
  projectId: string;
  id: string;
  name: string;
  status: string;
  vmState: string | null;
  /** Volume ids Nova lists for it. */
  volumeIds: string[];
  createdAt: string | null;
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

export type BackendHealthStatus = 'UP' | 'DOWN';

/** A backend probe's result. */
export interface BackendHealth {
  status: BackendHealthStatus;
  /** Round trip of the probe in milliseconds; null when it failed before an answer. */
  latencyMs: number | null;
  message: string | null;
  checkedAt: string;
}

/** A compute server referenced by key (an entity a compute subgraph may own). */
export interface ServerRef {
  __typename: 'Server';
  /** The Nova server UUID. */
  id: string;
}

/** A Nomad client node referenced by key (an entity a scheduler subgraph may own). */
export interface NomadNodeRef {
  __typename: 'NomadNode';
  /** The Nomad node id. */
  id: string;
}

/** What a tracked operation does. */
export type OperationKind =
  | 'CREATE_VOLUME'
  | 'DELETE_VOLUME'
  | 'ATTACH_VOLUME'
  | 'DETACH_VOLUME'
  | 'EXTEND_VOLUME'
  | 'UPDATE_VOLUME'
  | 'REGISTER_VOLUME'
  | 'DEREGISTER_VOLUME'
  | 'CREATE_SNAPSHOT'
  | 'DELETE_SNAPSHOT'
  | 'REVERT_VOLUME'
  | 'RETYPE_VOLUME'
  | 'MIGRATE_VOLUME'
  | 'UPLOAD_VOLUME_IMAGE'
  | 'REIMAGE_VOLUME'
  | 'UNMANAGE_VOLUME'
  | 'UPDATE_ATTACHMENT'
  | 'VOLUME_ACTION';

/** Where a tracked operation is; the last three are terminal. */
export type OperationState = 'PENDING' | 'RUNNING' | 'SUCCEEDED' | 'FAILED' | 'TIMED_OUT';

/** One tracked operation. Holds no credential: whoever drives it keeps the caller's in memory only. */
export interface OperationRecord {
  __typename: 'VolumeOperation';
  /** Random UUID; the global id wraps it with backend and scope. */
  id: string;
  kind: OperationKind;
  backend: string;
  /** Namespace or project of the target. */
  scope: string;
  /** Global id of the object the operation acts on (volume or snapshot). */
  targetId: string;
  state: OperationState;
  /** The backend's own status at the last check. */
  backendStatus: string | null;
  /** Why it failed or timed out; null otherwise. */
  failureReason: string | null;
  /** Epoch ms. */
  createdAt: number;
  updatedAt: number;
  deadline: number;
  /** Hash of (backend, caller token): who started it. Never the token itself. */
  owner: string;
  /**
   * What "done" means for the change, with the facts seen so far (`rule.seen`, saved after every
   * check); the backend that made it evaluates it. Absent when the backend finished at once.
   */
  rule?: import('./completion').CompletionRule;
}
