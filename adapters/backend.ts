/**
 * The backend-neutral contract. The server holds one `VolumeBackend` per configured backend;
 * resolvers call these methods through the request context and never see wire shapes.
 *
 * Operations a backend kind cannot do throw {@link UnsupportedByBackendError}
 * (inherited from {@link BaseBackend}); `capabilities` says which ones it can, so clients can ask
 * first.
 */
import { UnsupportedByBackendError } from './errors';
import type {
  AccessMode,
  AttachmentMode,
  BackendHealth,
  BackendKind,
  Capability,
  ExternalVolume,
  KeyValue,
  Plugin,
  Snapshot,
  Topology,
  Volume,
  VolumeRef,
} from './model';

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
  /** Aborted when the GraphQL request is abandoned. */
  signal?: AbortSignal;
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
}

export interface SnapshotSpec {
  volume: VolumeRef;
  name: string;
  pluginId?: string;
  parameters?: KeyValue[];
  secrets?: KeyValue[];
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
  registerVolume(spec: VolumeSpec, o: CallOptions): Promise<VolumeRef>;
  createVolume(spec: VolumeSpec, o: CallOptions): Promise<VolumeRef>;
  deregisterVolume(ref: VolumeRef, force: boolean, o: CallOptions): Promise<void>;
  deleteVolume(ref: VolumeRef, secrets: KeyValue[], o: CallOptions): Promise<void>;
  /** Detaches the volume from a consumer node/host. */
  detachVolume(ref: VolumeRef, nodeId: string, o: CallOptions): Promise<void>;
  listExternalVolumes(pluginId: string, namespace: string, limit: number, token: string | null, o: CallOptions): Promise<OpaquePage<ExternalVolume>>;
  createSnapshot(spec: SnapshotSpec, o: CallOptions): Promise<Snapshot>;
  deleteSnapshot(pluginId: string, snapshotId: string, secrets: KeyValue[], o: CallOptions): Promise<void>;
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
  createVolume(_spec: VolumeSpec, _o: CallOptions): Promise<VolumeRef> {
    return this.unsupported('creating volumes');
  }
  deregisterVolume(_ref: VolumeRef, _force: boolean, _o: CallOptions): Promise<void> {
    return this.unsupported('deregistering volumes');
  }
  deleteVolume(_ref: VolumeRef, _secrets: KeyValue[], _o: CallOptions): Promise<void> {
    return this.unsupported('deleting volumes');
  }
  detachVolume(_ref: VolumeRef, _nodeId: string, _o: CallOptions): Promise<void> {
    return this.unsupported('detaching volumes');
  }
  listExternalVolumes(_p: string, _ns: string, _l: number, _t: string | null, _o: CallOptions): Promise<OpaquePage<ExternalVolume>> {
    return this.unsupported('listing external volumes');
  }
  createSnapshot(_spec: SnapshotSpec, _o: CallOptions): Promise<Snapshot> {
    return this.unsupported('creating snapshots');
  }
  deleteSnapshot(_p: string, _s: string, _secrets: KeyValue[], _o: CallOptions): Promise<void> {
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
