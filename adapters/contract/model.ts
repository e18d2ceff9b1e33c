/**
 * The unified model (v2): what every backend adapter maps its wire shapes to, and what the GraphQL
 * schema speaks. Names are the gateway's, never a backend's. Objects that become GraphQL objects
 * carry their GraphQL `__typename`, so abstract types resolve by name and never by shape.
 *
 * Conventions: sizes are bytes (`…Bytes`), times are RFC 3339 strings (`…At`), and a `null` means
 * "the backend has no value". A value that the object does not hold yet (a Nomad list stub has no
 * attachments) is signalled by `complete: false`, never by `null`.
 */
/**
 * Which family of API a backend speaks: its module's `modelKind` (adapters/contract/module.ts), the
 * schema's `StorageBackendKind` value (a backend's SDL may add its value with `extend enum`). Open: a kind is
 * whatever its module declares, and nothing outside a backend's folder compares it to a literal.
 */
export type BackendKind = string;

/** Things a backend may or may not be able to do, in the schema's order of `StorageCapability`; `StorageBackend.capabilities` lists them in this order. */
export const CAPABILITIES = [
  'LIST_VOLUMES',
  'READ_VOLUME',
  'CREATE_VOLUME',
  'DELETE_VOLUME',
  'ATTACH_VOLUME',
  'DETACH_VOLUME',
  'EXTEND_VOLUME',
  'UPDATE_VOLUME',
  'LIST_SNAPSHOTS',
  'READ_SNAPSHOT',
  'CREATE_SNAPSHOT',
  'DELETE_SNAPSHOT',
  'REVERT_VOLUME',
  'REGISTER_VOLUME',
  'LIST_EXTERNAL_VOLUMES',
  'LIST_PLUGINS',
  'HOST_ATTACHMENTS',
  'SERVER_ATTACHMENTS',
  'VOLUME_ACTIONS',
  'TRACKED_OPERATIONS',
  'VOLUME_DIAGNOSIS',
] as const;

export type Capability = (typeof CAPABILITIES)[number];

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

/** An access/attachment mode pair a volume was requested with. */
export interface RequestedCapability {
  accessMode: AccessMode | null;
  attachmentMode: AttachmentMode | null;
}

/** Identifies a volume within the gateway. */
export interface VolumeRef {
  backend: string;
  /** Nomad namespace or OpenStack project id. */
  namespace: string;
  nativeId: string;
}

/**
 * A volume on any backend: the core every backend has, plus its backend's typed details (`D`: a
 * backend's mapping returns `Volume<ItsDetails>`, everything else sees the neutral `VolumeDetails`).
 */
export interface Volume<D extends VolumeDetails = VolumeDetails> {
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
  details: D;
}

/**
 * The backend-specific part of a volume. Each backend's details extend it with their own GraphQL
 * type (`__typename`, a member of the schema's `VolumeDetails` union) and fields; code outside
 * the backend's folder treats them as opaque.
 */
export interface VolumeDetails {
  __typename: string;
}

/**
 * What every consumer says of itself in neutral terms, so that the live path (events/diff.ts)
 * treats every backend's consumers alike and never asks which type one is.
 */
export interface ConsumerBase {
  /** The consumer's GraphQL type, a member of the schema's `VolumeConsumer` union. */
  __typename: string;
  /**
   * True when the consumer holds the volume by a claim that a scheduler makes and releases as it
   * places and stops the consumer (changes CLAIMED, DETACHING while released, RELEASED), rather
   * than by an attach and detach on request (ATTACHING … DETACHED). @default false
   */
  claim?: boolean;
  /** The node the consumer runs on, matched by `attachmentChanged` node targets; null or absent when unknown. */
  nodeId?: string | null;
  /** The server the consumer is, matched by `attachmentChanged` server targets. */
  serverId?: string;
}

/**
 * A host holding a volume: the consumer type every kind may use (the schema's core
 * `VolumeHostConsumer`); a kind's own host consumer extends it.
 */
export interface HostConsumer extends ConsumerBase {
  __typename: 'VolumeHostConsumer';
  /** The host's name; null where the backend hides it from the caller. */
  hostName: string | null;
}

/**
 * An attachment's consumer: a backend's own consumer type (adapters/<backend>/model.ts, a member of
 * the schema's `VolumeConsumer` union); code outside the backend reads only its neutral part.
 */
export type AttachmentConsumer = ConsumerBase;

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

/** A compute server as its backend shows it (OpenStack: Nova), for the server-attachments facet. */
export interface ComputeServer {
  backend: string;
  /** The server's scope (OpenStack project id). */
  projectId: string;
  id: string;
  name: string;
  status: string;
  vmState: string | null;
  /** Volume ids the server lists. */
  volumeIds: string[];
  createdAt: string | null;
}

/** A compute server referenced by key (an entity a compute subgraph may own). */
export interface ServerRef {
  __typename: 'Server';
  /** The server id. */
  id: string;
}

export * from './model-shared';
export * from './model-operation';
export * from './model-plugin';
