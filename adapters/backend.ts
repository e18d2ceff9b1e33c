/**
 * The backend-neutral contract. The server holds one `VolumeBackend` per configured backend;
 * resolvers call these methods through the request context and never see wire shapes.
 *
 * Operations a backend kind cannot do throw {@link UnsupportedByBackendError}
 * (inherited from {@link BaseBackend}); `capabilities` says which ones it can, so clients can ask
 * first.
 */
import type { CallBudget } from './budget';
import { UnsupportedByBackendError } from './errors';
import type {
  AccessMode,
  Attachment,
  AttachmentMode,
  BackendHealth,
  BackendKind,
  Capability,
  ExternalVolume,
  KeyValue,
  Plugin,
  Snapshot,
  Topology,
  OpenStackServer,
  ServerVolumeAttachment,
  Volume,
  VolumeRef,
} from './model';

/** Progress of a change the backend finishes after answering. */
export type ChangeProgress =
  | { state: 'RUNNING'; backendStatus?: string | null }
  | { state: 'SUCCEEDED'; backendStatus?: string | null }
  | { state: 'FAILED'; reason: string; backendStatus?: string | null };

/**
 * A change the backend accepted but finishes later. The operation tracker calls `check` until
 * it settles or the deadline passes; `check` throws only for real failures (the tracker retries
 * transient ones until the deadline).
 */
export interface PendingChange {
  check(o: CallOptions): Promise<ChangeProgress>;
  /** Longest the change may take. @default the tracker's default (OPERATION_TIMEOUT_MS) */
  timeoutMs?: number;
}

/** A mutation's immediate result plus the work still running on the backend (null: done). */
export interface Accepted<T> {
  result: T;
  pending: PendingChange | null;
}

/** Where to attach a volume: a server (OpenStack: through Nova) or a host (Cinder attachments API). */
export interface AttachTarget {
  serverId?: string;
  /** Host connector (Cinder attachments API); its `host` names the host. */
  connector?: Record<string, unknown>;
  device?: string;
  tag?: string;
  deleteOnTermination?: boolean;
  readOnly?: boolean;
}

/** What to detach a volume from. */
export interface DetachTarget {
  /** Nomad client node. */
  nodeId?: string;
  /** OpenStack server (through Nova). */
  serverId?: string;
  /** A host attachment (Cinder attachments API). */
  attachmentId?: string;
}

/** Cinder's volume actions that have no unified counterpart, one typed variant each. */
export type VolumeAction =
  | { kind: 'os-extend_volume_completion'; error: boolean }
  | { kind: 'os-reset_status'; status?: string; attachStatus?: string; migrationStatus?: string }
  | { kind: 'revert'; snapshotId: string }
  | { kind: 'os-set_image_metadata'; metadata: KeyValue[] }
  | { kind: 'os-unset_image_metadata'; key: string }
  | { kind: 'os-show_image_metadata' }
  | { kind: 'os-attach'; serverId?: string; hostName?: string; mountpoint: string; readOnly: boolean }
  | { kind: 'os-detach'; attachmentId?: string }
  | { kind: 'os-unmanage' }
  | { kind: 'os-force_detach'; attachmentId?: string; connector?: Record<string, unknown> }
  | { kind: 'os-retype'; newType: string; onDemandMigration: boolean }
  | { kind: 'os-migrate_volume'; host?: string; cluster?: string; forceHostCopy?: boolean; lockVolume?: boolean }
  | { kind: 'os-migrate_volume_completion'; newVolumeId: string; error: boolean }
  | { kind: 'os-force_delete' }
  | { kind: 'os-set_bootable'; bootable: boolean }
  | { kind: 'os-volume_upload_image'; imageName: string; force?: boolean; diskFormat?: string; containerFormat?: string; visibility?: string; protected?: boolean }
  | { kind: 'os-reserve' }
  | { kind: 'os-unreserve' }
  | { kind: 'os-begin_detaching' }
  | { kind: 'os-roll_detaching' }
  | { kind: 'os-terminate_connection'; connector: Record<string, unknown> | null }
  | { kind: 'os-initialize_connection'; connector: Record<string, unknown> }
  | { kind: 'os-update_readonly_flag'; readonly: boolean }
  | { kind: 'os-reimage'; imageId: string; reimageReserved: boolean };

/** What a volume action returns besides the volume itself. */
export interface VolumeActionResult {
  /** os-set/show_image_metadata: all image metadata after the action. */
  imageMetadata?: KeyValue[];
  /** os-initialize_connection only: the driver's connection info (secret-bearing). */
  connectionInfo?: unknown;
  /** os-migrate_volume_completion. */
  savedVolumeId?: string;
  /** os-volume_upload_image. */
  image?: { id: string; name: string; diskFormat: string | null; containerFormat: string | null };
}

/**
 * The caller's credential for one backend, taken from the GraphQL request and passed through.
 * Never logged, never returned, never shared between callers.
 */
export interface CallerCredential {
  /** Backend token (Nomad ACL secret …); undefined = anonymous. */
  token?: string;
}

/** Per-call options every backend method takes. */
export interface CallOptions {
  credential: CallerCredential;
  /** Caller's request id, forwarded to the backend for log correlation. */
  requestId?: string;
  /**
   * Aborted when the GraphQL request is abandoned or runs past its deadline; a {@link GatewayError}
   * as the abort reason is what the call fails with.
   */
  signal?: AbortSignal;
  /** The execution's backend-call budget; every HTTP request takes one unit. @default unlimited */
  budget?: CallBudget;
}

/** One item of a backend page plus the opaque token that resumes a listing *at* that item. */
export interface Positioned<T> {
  item: T;
  position: string;
}

/** A page from a backend: items in the backend's stable order and the token of the next page. */
export interface BackendPage<T> {
  items: Positioned<T>[];
  /** Token of the next page; null on the last page. */
  next: string | null;
}

/** Filters a backend applies itself (the gateway applies the derived ones, such as status). */
export interface VolumeListQuery {
  /** Namespace/project, or '*' for all the caller may see. */
  namespace: string;
  plugin?: string;
  /** Exact volume name. */
  name?: string;
  /** Only volumes used by consumers on this node (Nomad node id). */
  node?: string;
  /** Most items wanted (the backend may return fewer). */
  limit: number;
  /** Resume token from a previous page's `next` or an item's `position`; null = from the start. */
  token: string | null;
}

/** A backend-neutral volume specification for create and register. */
export interface VolumeSpec {
  namespace: string;
  /** Nomad requires the caller to choose the volume id. */
  nativeId?: string;
  name: string;
  pluginId?: string;
  /** Provider id of an existing volume (register only). */
  externalId?: string;
  capacityMinBytes?: number;
  capacityMaxBytes?: number;
  capabilities: Array<{ accessMode: AccessMode; attachmentMode: AttachmentMode }>;
  mountOptions?: { fsType?: string; mountFlags?: string[] };
  /** Passed to the backend; never stored or returned by the gateway. */
  secrets?: KeyValue[];
  parameters?: KeyValue[];
  context?: KeyValue[];
  requiredTopologies?: Topology[];
  preferredTopologies?: Topology[];
  snapshotId?: string;
  cloneId?: string;
  /** OpenStack: size in GiB (Cinder sizes are whole GiB). */
  sizeGiB?: number;
  description?: string;
  volumeType?: string;
  availabilityZone?: string;
  metadata?: KeyValue[];
}

export interface DeleteVolumeOptions {
  /** Nomad: merged over the volume's stored secrets. Never returned or logged. */
  secrets: KeyValue[];
  /** OpenStack: delete the volume's snapshots too. */
  cascade?: boolean;
  /** OpenStack (≥ 3.23, admin): delete in any status. */
  force?: boolean;
}

/** Changeable descriptive fields (OpenStack). */
export interface VolumePatch {
  name?: string;
  description?: string;
  metadata?: KeyValue[];
}

export interface SnapshotSpec {
  volume: VolumeRef;
  name: string;
  pluginId?: string;
  parameters?: KeyValue[];
  secrets?: KeyValue[];
  description?: string;
  /** OpenStack: snapshot an in-use volume. */
  force?: boolean;
}

/** A page of a listing whose cursor the backend defines (Nomad plugin-opaque tokens). */
export interface OpaquePage<T> {
  items: T[];
  next: string | null;
}

export interface VolumeBackend {
  readonly id: string;
  readonly kind: BackendKind;
  readonly capabilities: ReadonlySet<Capability>;
  /** Probes the backend with no caller credential. Never throws. */
  health(signal?: AbortSignal): Promise<BackendHealth>;
  listVolumes(q: VolumeListQuery, o: CallOptions): Promise<BackendPage<Volume>>;
  /** Full read; null when the volume does not exist (or the caller may not see it, if the backend hides it). */
  getVolume(ref: VolumeRef, o: CallOptions): Promise<Volume | null>;
  /** Optional batch read of volumes of one backend and scope, one value or Error per ref, in order. */
  getVolumes?(refs: readonly VolumeRef[], o: CallOptions, concurrency: number): Promise<Array<Volume | null | Error>>;
  registerVolume(spec: VolumeSpec, o: CallOptions): Promise<VolumeRef>;
  createVolume(spec: VolumeSpec, o: CallOptions): Promise<Accepted<VolumeRef>>;
  deregisterVolume(ref: VolumeRef, force: boolean, o: CallOptions): Promise<void>;
  deleteVolume(ref: VolumeRef, opts: DeleteVolumeOptions, o: CallOptions): Promise<Accepted<void>>;
  /** Detaches the volume from a consumer node, server or host. */
  detachVolume(ref: VolumeRef, target: DetachTarget, o: CallOptions): Promise<Accepted<void>>;
  attachVolume(ref: VolumeRef, target: AttachTarget, o: CallOptions): Promise<Accepted<Attachment | null>>;
  extendVolume(ref: VolumeRef, newSizeBytes: number, o: CallOptions): Promise<Accepted<void>>;
  updateVolume(ref: VolumeRef, patch: VolumePatch, o: CallOptions): Promise<Volume>;
  volumeAction(ref: VolumeRef, action: VolumeAction, o: CallOptions): Promise<Accepted<VolumeActionResult>>;
  /** Host attachments (Cinder attachments API). */
  listHostAttachments(scope: string, q: { volumeId?: string; limit: number; token: string | null }, o: CallOptions): Promise<OpaquePage<Attachment>>;
  /** Reserves the volume for a host without a connector yet. */
  reserveHostAttachment(ref: VolumeRef, o: CallOptions): Promise<Attachment>;
  updateHostAttachment(ref: VolumeRef, attachmentId: string, connector: Record<string, unknown>, o: CallOptions): Promise<Attachment>;
  completeHostAttachment(ref: VolumeRef, attachmentId: string, o: CallOptions): Promise<void>;
  /** Servers (Nova). Missing ids are absent from the answer. */
  getServers(scope: string, ids: readonly string[], o: CallOptions): Promise<Map<string, OpenStackServer>>;
  listServers(scope: string, limit: number, token: string | null, o: CallOptions): Promise<OpaquePage<OpenStackServer>>;
  listServerVolumeAttachments(scope: string, serverId: string, o: CallOptions): Promise<ServerVolumeAttachment[]>;
  /** One volume's attachment to a server, or null when Nova has none. */
  getServerVolumeAttachment(scope: string, serverId: string, volumeId: string, o: CallOptions): Promise<ServerVolumeAttachment | null>;
  updateServerVolumeAttachment(scope: string, serverId: string, volumeId: string, change: { newVolumeId?: string; deleteOnTermination?: boolean }, o: CallOptions): Promise<Accepted<void>>;
  listExternalVolumes(pluginId: string, namespace: string, limit: number, token: string | null, o: CallOptions): Promise<OpaquePage<ExternalVolume>>;
  createSnapshot(spec: SnapshotSpec, o: CallOptions): Promise<Accepted<Snapshot>>;
  /** `scope`: Nomad plugin id, OpenStack project id. */
  deleteSnapshot(scope: string, snapshotId: string, secrets: KeyValue[], o: CallOptions): Promise<Accepted<void>>;
  /** Full read of one snapshot; null when unknown. Nomad cannot (snapshots are listed per plugin). */
  getSnapshot(scope: string, snapshotId: string, o: CallOptions): Promise<Snapshot | null>;
  listSnapshots(pluginId: string, limit: number, token: string | null, secrets: KeyValue[], o: CallOptions): Promise<OpaquePage<Snapshot>>;
  listPlugins(o: CallOptions): Promise<Plugin[]>;
  /** Full read; null when unknown. */
  getPlugin(pluginId: string, o: CallOptions): Promise<Plugin | null>;
  /** Releases pooled connections. */
  close(): Promise<void>;
}

/** Answers UNSUPPORTED_BY_BACKEND for everything; concrete backends override what they can do. */
export abstract class BaseBackend implements VolumeBackend {
  abstract readonly id: string;
  abstract readonly kind: BackendKind;
  abstract readonly capabilities: ReadonlySet<Capability>;
  abstract health(signal?: AbortSignal): Promise<BackendHealth>;

  protected unsupported(operation: string, why?: string): never {
    throw new UnsupportedByBackendError(this.id, operation, why);
  }

  listVolumes(_q: VolumeListQuery, _o: CallOptions): Promise<BackendPage<Volume>> {
    return this.unsupported('listing volumes');
  }
  getVolume(_ref: VolumeRef, _o: CallOptions): Promise<Volume | null> {
    return this.unsupported('reading volumes');
  }
  registerVolume(_spec: VolumeSpec, _o: CallOptions): Promise<VolumeRef> {
    return this.unsupported('registering volumes');
  }
  createVolume(_spec: VolumeSpec, _o: CallOptions): Promise<Accepted<VolumeRef>> {
    return this.unsupported('creating volumes');
  }
  deregisterVolume(_ref: VolumeRef, _force: boolean, _o: CallOptions): Promise<void> {
    return this.unsupported('deregistering volumes');
  }
  deleteVolume(_ref: VolumeRef, _opts: DeleteVolumeOptions, _o: CallOptions): Promise<Accepted<void>> {
    return this.unsupported('deleting volumes');
  }
  detachVolume(_ref: VolumeRef, _t: DetachTarget, _o: CallOptions): Promise<Accepted<void>> {
    return this.unsupported('detaching volumes');
  }
  attachVolume(_ref: VolumeRef, _t: AttachTarget, _o: CallOptions): Promise<Accepted<Attachment | null>> {
    return this.unsupported('attaching volumes');
  }
  extendVolume(_ref: VolumeRef, _size: number, _o: CallOptions): Promise<Accepted<void>> {
    return this.unsupported('extending volumes');
  }
  updateVolume(_ref: VolumeRef, _p: VolumePatch, _o: CallOptions): Promise<Volume> {
    return this.unsupported('updating volumes');
  }
  volumeAction(_ref: VolumeRef, a: VolumeAction, _o: CallOptions): Promise<Accepted<VolumeActionResult>> {
    return this.unsupported(`the volume action ${a.kind}`);
  }
  listHostAttachments(_s: string, _q: { volumeId?: string; limit: number; token: string | null }, _o: CallOptions): Promise<OpaquePage<Attachment>> {
    return this.unsupported('host attachments');
  }
  reserveHostAttachment(_r: VolumeRef, _o: CallOptions): Promise<Attachment> {
    return this.unsupported('host attachments');
  }
  updateHostAttachment(_r: VolumeRef, _a: string, _c: Record<string, unknown>, _o: CallOptions): Promise<Attachment> {
    return this.unsupported('host attachments');
  }
  completeHostAttachment(_r: VolumeRef, _a: string, _o: CallOptions): Promise<void> {
    return this.unsupported('host attachments');
  }
  getServers(_s: string, _ids: readonly string[], _o: CallOptions): Promise<Map<string, OpenStackServer>> {
    return this.unsupported('servers');
  }
  listServers(_s: string, _l: number, _t: string | null, _o: CallOptions): Promise<OpaquePage<OpenStackServer>> {
    return this.unsupported('servers');
  }
  listServerVolumeAttachments(_s: string, _id: string, _o: CallOptions): Promise<ServerVolumeAttachment[]> {
    return this.unsupported('server volume attachments');
  }
  getServerVolumeAttachment(_s: string, _sid: string, _v: string, _o: CallOptions): Promise<ServerVolumeAttachment | null> {
    return this.unsupported('server volume attachments');
  }
  updateServerVolumeAttachment(_s: string, _sid: string, _v: string, _c: { newVolumeId?: string; deleteOnTermination?: boolean }, _o: CallOptions): Promise<Accepted<void>> {
    return this.unsupported('server volume attachments');
  }
  getSnapshot(_s: string, _id: string, _o: CallOptions): Promise<Snapshot | null> {
    return this.unsupported('reading one snapshot', 'list snapshots instead');
  }
  listExternalVolumes(_p: string, _ns: string, _l: number, _t: string | null, _o: CallOptions): Promise<OpaquePage<ExternalVolume>> {
    return this.unsupported('listing external volumes');
  }
  createSnapshot(_spec: SnapshotSpec, _o: CallOptions): Promise<Accepted<Snapshot>> {
    return this.unsupported('creating snapshots');
  }
  deleteSnapshot(_p: string, _s: string, _secrets: KeyValue[], _o: CallOptions): Promise<Accepted<void>> {
    return this.unsupported('deleting snapshots');
  }
  listSnapshots(_p: string, _l: number, _t: string | null, _secrets: KeyValue[], _o: CallOptions): Promise<OpaquePage<Snapshot>> {
    return this.unsupported('listing snapshots');
  }
  listPlugins(_o: CallOptions): Promise<Plugin[]> {
    return this.unsupported('listing plugins');
  }
  getPlugin(_id: string, _o: CallOptions): Promise<Plugin | null> {
    return this.unsupported('reading plugins');
  }
  async close(): Promise<void> {}
}
