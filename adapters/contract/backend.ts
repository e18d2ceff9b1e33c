/**
 * The backend-neutral contract (v2), core part. The server holds one `VolumeBackend` per configured
 * backend; resolvers call these methods through the execution context and never see wire shapes.
 *
 * The core is what every volume backend has. What only some backends do are facets, optional
 * members named by what they do (`capabilities.ts`): a backend sets those it has and nothing else.
 */
import type { Accepted, BackendPage, OpaquePage } from './call-answers';
import type {
  AttachTarget,
  DeleteSnapshotOptions,
  DeleteVolumeOptions,
  DetachTarget,
  OwnAttachInput,
  OwnCreateInput,
  SnapshotListQuery,
  SnapshotRef,
  SnapshotSpec,
  VolumeListQuery,
  VolumeSpec,
} from './call-inputs';
import type { CallOptions, CallerCredential, ProbeCall } from './call-options';
import type { BackendFacets } from './capabilities';
import type { Attachment, BackendHealth, BackendKind, Capability, Snapshot, Volume, VolumeRef } from './model';

/**
 * True when `backend` needs a caller credential (`requiresCredential`) and `credential` carries
 * none: the backend is left out as `NO_CREDENTIAL` (not an error), by merged lists and subscriptions alike.
 */
export function lacksCredential(
  backend: Pick<VolumeBackend, 'requiresCredential'>,
  credential: CallerCredential,
): boolean {
  return backend.requiresCredential && !credential.token;
}

/** The core every volume backend has, and the optional facets it may have. */
export interface VolumeBackend extends BackendFacets {
  readonly id: string;
  /** Its module's `modelKind` (the schema's `BackendKind`). */
  readonly kind: BackendKind;
  /** What it advertises: derived from its core list and its facets (`advertise`, capabilities.ts). */
  readonly capabilities: ReadonlySet<Capability>;
  /**
   * True when no call can succeed without a caller credential (OpenStack: Keystone). A merged list
   * then leaves the backend out as `NO_CREDENTIAL` in the data instead of failing.
   */
  readonly requiresCredential: boolean;
  /** Its kind's own part of a create's input, if the kind has one. @default none */
  readonly createInput?: OwnCreateInput;
  /** Its kind's own rules on an attach's target, if the kind has any. @default none */
  readonly attachInput?: OwnAttachInput;
  /**
   * Set when the backend lists snapshots per plugin only, so a listing must name one: the reason,
   * for the message a listing without a plugin gets. @default unset (listed per scope)
   */
  readonly snapshotsPerPlugin?: string;
  /**
   * Probes the backend with the gateway's own means, no caller credential. Never throws.
   * @param probe set by the background probe only (server/readiness.ts): its calls may pass
   *   breakers that are not closed, and close them (`breaker.ts`). @default a caller's read of health
   */
  health(signal?: AbortSignal, probe?: ProbeCall): Promise<BackendHealth>;
  /** One page of this backend's volumes (list stubs may be incomplete: `complete: false`), from `q.token` on. */
  listVolumes(q: VolumeListQuery, o: CallOptions): Promise<BackendPage<Volume>>;
  /** Full read; null when the volume does not exist (or the caller may not see it, if the backend hides it). */
  getVolume(ref: VolumeRef, o: CallOptions): Promise<Volume | null>;
  /**
   * Full reads of volumes of one backend and scope, one value or Error per ref, in order, with as
   * few calls as the backend allows (Cinder: one list when many are asked; Nomad: one read each).
   */
  getVolumes(refs: readonly VolumeRef[], o: CallOptions, concurrency: number): Promise<Array<Volume | null | Error>>;
  createVolume(spec: VolumeSpec, o: CallOptions): Promise<Accepted<VolumeRef>>;
  deleteVolume(ref: VolumeRef, opts: DeleteVolumeOptions, o: CallOptions): Promise<Accepted<void>>;
  /** Attaches where the backend lets callers attach; Nomad answers why it does not (allocations claim). */
  attachVolume(ref: VolumeRef, target: AttachTarget, o: CallOptions): Promise<Accepted<Attachment | null>>;
  detachVolume(ref: VolumeRef, target: DetachTarget, o: CallOptions): Promise<Accepted<void>>;
  /** Grows a volume to at least `newSizeBytes` (backends that count in GiB need a whole number). */
  extendVolume(ref: VolumeRef, newSizeBytes: number, o: CallOptions): Promise<Accepted<void>>;
  listSnapshots(q: SnapshotListQuery, o: CallOptions): Promise<OpaquePage<Snapshot>>;
  createSnapshot(spec: SnapshotSpec, o: CallOptions): Promise<Accepted<Snapshot>>;
  deleteSnapshot(ref: SnapshotRef, opts: DeleteSnapshotOptions, o: CallOptions): Promise<Accepted<void>>;
  /** Releases pooled connections. */
  close(): Promise<void>;
}
