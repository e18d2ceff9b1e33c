/**
 * The unified model (v2): what every backend adapter maps its wire shapes to, and what the GraphQL
 * schema speaks. Names are the gateway's, never a backend's. Objects that become GraphQL objects
 * carry their GraphQL `__typename`, so abstract types resolve by name and never by shape.
 *
 * Conventions: sizes are bytes (`…Bytes`), times are RFC 3339 strings (`…At`), and a `null` means
 * "the backend has no value". A value that the object does not hold yet (a Nomad list stub has no
 * attachments) is signalled by `complete: false`, never by `null`.
 */
import type { NomadVolumeDetails } from '../model-nomad';
import type { CinderVolumeDetails } from '../model-openstack';
import type { MemoryVolumeDetails } from '../memory/details';

/** Which family of API a backend speaks. */
export type BackendKind = 'NOMAD' | 'OPENSTACK' | 'MEMORY';

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
export type VolumeDetails = NomadVolumeDetails | CinderVolumeDetails | MemoryVolumeDetails;


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

export type BackendHealthStatus = 'UP' | 'DOWN';

/** A backend probe's result. */
export interface BackendHealth {
  status: BackendHealthStatus;
  /** Round trip of the probe in milliseconds; null when it failed before an answer. */
  latencyMs: number | null;
  message: string | null;
  checkedAt: string;
}

export * from '../model-nomad';
export * from '../model-openstack';
export * from './model-operation';
