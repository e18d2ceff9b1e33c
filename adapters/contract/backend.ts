/**
 * The backend-neutral contract (v2), core part. The server holds one `VolumeBackend` per configured
 * backend; resolvers call these methods through the execution context and never see wire shapes.
 *
 * The core is what every volume backend has. What only some backends do are facets, optional
 * members named by what they do (`capabilities.ts`): a backend sets those it has and nothing else.
 */
import type { CallBudget } from './budget';
import type { BackendFacets } from './capabilities';
import type { PendingChange } from './completion';
import type {
  Attachment,
  BackendHealth,
  BackendKind,
  Capability,
  KeyValue,
  Snapshot,
  Volume,
  VolumeRef,
} from './model';

export type { PendingChange } from './completion';

/** A mutation's immediate result plus the work still running on the backend (null: done). */
export interface Accepted<T> {
  result: T;
  pending: PendingChange | null;
}

/**
 * The caller's credential for one backend, taken from the request and passed through.
 * Never logged, never returned, never shared between callers.
 */
export interface CallerCredential {
  /** Backend token (Nomad ACL secret, Keystone token); undefined = anonymous. */
  token?: string;
}

/** Per-call options every backend method takes. */
export interface CallOptions {
  credential: CallerCredential;
  /** Caller's request id, forwarded to the backend for log correlation. */
  requestId?: string;
  /**
   * Aborted when the operation is abandoned or runs past its deadline; a {@link GatewayError}
   * as the abort reason is what the call fails with.
   */
  signal?: AbortSignal;
  /** The execution's backend-call budget; every HTTP request takes one unit. @default unlimited */
  budget?: CallBudget;
  /**
   * Told the HTTP status of each answer to a request that carried `credential` (never the
   * gateway's own service credential): whether a backend accepted the caller. @default none
   */
  onAnswer?: (status: number) => void;
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

/** A page of a listing whose cursor the backend defines. */
export interface OpaquePage<T> {
  items: T[];
  next: string | null;
}

/** Filters a backend applies itself (the gateway applies the derived ones, such as status). */
export interface VolumeListQuery {
  /** Namespace/project, or '*' for all the caller may see. */
  namespace: string;
  /** Exact volume name. */
  name?: string;
  /** Only volumes used by consumers on this node (Nomad node id). */
  node?: string;
  /** Most items wanted (the backend may return fewer). */
  limit: number;
  /** Resume token from a previous page's `next` or an item's `position`; null = from the start. */
  token: string | null;
  /**
   * The listing's arguments only some kinds take, as the caller gave them: `{ filter }` (the
   * filter but its neutral fields, e.g. a plugin id); each backend reads its own ({@link OwnInput}).
   * @default none
   */
  own?: OwnInput;
}

/**
 * A kind's own part of an input, as the caller gave it (GraphQL input values, unparsed). The
 * backend parses it with its own typed parser, in its folder. Its input errors name fields
 * relative to the input it was given (`BadUserInputError.atField`): a mutation's input
 * (`nomad.nativeId`, `cascade`) or a query's arguments (`filter.plugin`, `secrets`); the resolver
 * layer places them under the argument (`resolvers/input-fields.ts`).
 */
export type OwnInput = unknown;

/**
 * An os-brick style host connector: how a host reaches block storage. Typed here; the OpenStack
 * adapter writes the wire keys.
 */
export interface HostConnector {
  /** Host name (required by Cinder). */
  host: string;
  ip?: string;
  /** iSCSI initiator IQN. */
  initiator?: string;
  /** Fibre Channel port names. */
  wwpns?: string[];
  /** Fibre Channel node names. */
  wwnns?: string[];
  /** NVMe-oF host NQN. */
  nqn?: string;
  /** e.g. `x86_64`. */
  platform?: string;
  /** e.g. `linux2`. */
  osType?: string;
  multipath?: boolean;
  doLocalAttach?: boolean;
  /** The host's system UUID (NVMe-oF). */
  systemUuid?: string;
}

/** Where to attach a volume. */
export type AttachTarget =
  | {
      kind: 'server';
      /** OpenStack server (attached through Nova, as users do). */
      serverId: string;
      /** Requested device name, e.g. /dev/vdb (the hypervisor may choose another). */
      device?: string;
      /** Device tag. */
      tag?: string;
      /** Delete the volume when the server is deleted. */
      deleteOnTermination?: boolean;
    }
  | {
      kind: 'host';
      /** The host to attach (Cinder attachments API: created and completed at once). */
      connector: HostConnector;
      /** @default false */
      readOnly?: boolean;
    };

/** What to detach a volume from. */
export type DetachTarget =
  | { kind: 'node'; /** Nomad client node. */ nodeId: string }
  | { kind: 'server'; /** OpenStack server (through Nova). */ serverId: string }
  | { kind: 'hostAttachment'; /** A host attachment (Cinder attachments API). */ attachmentId: string };

/**
 * A kind's own part of a create's input (the GraphQL `CreateVolumeInput.<field>`): options only
 * backends of that kind take. The resolvers refuse it for any other backend.
 */
export interface OwnCreateInput {
  /** The input field, e.g. `nomad`. */
  readonly field: string;
  /** The kind as messages name it: "input.<field> is for <owner> backends". */
  readonly owner: string;
  /**
   * Set when every create on this kind must give the part: the message when it is missing, given
   * the part's argument path (e.g. `input.nomad`). @default the part is optional
   */
  readonly required?: (part: string) => string;
  /**
   * Checks the part (and the rest of the spec the kind reads) before anything is done: the domain
   * calls it before it claims an idempotency key, so bad input is refused as such even when the
   * key store is down, and holds no key. Throws the errors the create would, fields relative to
   * the create input. @default no check before the call
   */
  readonly check?: (spec: VolumeSpec, backend: string) => void;
}

/** A backend-neutral volume specification for create (and Nomad's register). */
export interface VolumeSpec {
  namespace: string;
  /**
   * The id the caller chose, for kinds that take one outside their own part (memory). A kind that
   * takes it in its own part (Nomad: `nomad.nativeId`) reads it there. @default the backend chooses
   */
  nativeId?: string;
  name: string;
  /** At least this many bytes (backends that count in GiB round up). */
  capacityMinBytes?: number;
  /** At most this many bytes. */
  capacityMaxBytes?: number;
  description?: string;
  metadata?: KeyValue[];
  /**
   * The kind's own part: on a create the value of its {@link OwnCreateInput.field} (e.g. the
   * `nomad` part, errors relative to the create input: `nomad.plugin`); on Nomad's register the
   * register input itself. @default none
   */
  own?: OwnInput;
}

/** Options of a volume delete. */
export interface DeleteVolumeOptions {
  /**
   * The delete input's fields but the volume's id, as the caller gave them: each kind reads its
   * own (plugin secrets, a cascade, a forced delete) and refuses the others'. Secrets are never
   * returned or logged. @default none
   */
  own?: OwnInput;
}

/** Identifies a snapshot within the gateway. */
export interface SnapshotRef {
  backend: string;
  /** Nomad: plugin id; OpenStack: project id. */
  scope: string;
  nativeId: string;
}

/** Which snapshots to list. */
export interface SnapshotListQuery {
  /** Only the snapshots of this volume. */
  volume?: VolumeRef;
  limit: number;
  token: string | null;
  /**
   * The listing's arguments only some kinds take, as the caller gave them: `{ filter, secrets }`
   * (the filter but its volume; e.g. a plugin and plugin secrets). Secrets are never returned or
   * logged. @default none
   */
  own?: OwnInput;
}

/** What to snapshot. */
export interface SnapshotSpec {
  volume: VolumeRef;
  name: string;
  description?: string;
  /**
   * The create input's fields but the neutral ones (volume, name, description, idempotency key),
   * as the caller gave them: e.g. a plugin, its parameters and secrets, or a forced snapshot.
   * Secrets are never returned or logged. @default none
   */
  own?: OwnInput;
}

/** Options of a snapshot delete. */
export interface DeleteSnapshotOptions {
  /** The delete input's fields but the snapshot's id, as the caller gave them (e.g. plugin secrets). @default none */
  own?: OwnInput;
}

/**
 * True when `backend` needs a caller credential (`requiresCredential`) and `credential` carries
 * none: the backend is left out as `NO_CREDENTIAL` (not an error), by merged lists and subscriptions alike.
 */
export function lacksCredential(backend: Pick<VolumeBackend, 'requiresCredential'>, credential: CallerCredential): boolean {
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
  /**
   * Set when the backend lists snapshots per plugin only, so a listing must name one: the reason,
   * for the message a listing without a plugin gets. @default unset (listed per scope)
   */
  readonly snapshotsPerPlugin?: string;
  /** Probes the backend with the gateway's own means, no caller credential. Never throws. */
  health(signal?: AbortSignal): Promise<BackendHealth>;
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
