/**
 * The live path's contract with a backend (docs/subscriptions.md): a watcher that keeps the
 * backend's volumes current with the gateway's own service credential and reports what changed,
 * and the access check that decides which subscribers may see a change. Both are facets
 * (`watching`, `subscriberAccess`: capabilities.ts), so a backend without them simply has no live status.
 *
 * Watchers report full volumes, before and after; `watch-diff.ts` turns those into typed changes,
 * the same way for every backend.
 */
import type { CallOptions, CallerCredential } from './call-options';
import type { Volume, VolumeRef } from './model';

/** What a watcher is doing now (reported by `/readyz` and `/metrics`). */
export type WatcherState =
  /** Started, first full view not yet read. */
  | 'STARTING'
  /** Following the backend's push source (Nomad's event stream). */
  | 'STREAMING'
  /** Following by polling or blocking queries. */
  | 'POLLING'
  /** Re-reading everything after a gap (a lost stream position, a reconnect). */
  | 'RESYNCING'
  /** Nobody listens and nothing is pending: not reading at all (OpenStack). */
  | 'IDLE'
  /**
   * The source fails, fell silent past its heartbeat allowance, or a breaker of the backend is
   * open; retrying with back-off. The view may be stale.
   */
  | 'DEGRADED'
  | 'STOPPED';

/** Where the watcher's changes come from. */
export type WatchSource = 'EVENT_STREAM' | 'BLOCKING_QUERY' | 'POLLING';

export interface WatcherStatus {
  backend: string;
  state: WatcherState;
  source: WatchSource;
  /** Volumes in the watcher's view. */
  volumes: number;
  /** When the view was last known current (ms since epoch); null before the first full read. */
  currentAt: number | null;
  /** Now minus `currentAt`, in ms; null before the first full read. */
  lagMs: number | null;
  /** For humans: the last error, the scopes watched. Never a credential. */
  message: string | null;
}

/**
 * One volume's change as the watcher saw it: the state before (null: new) and after (null: gone).
 * Both are full volumes (attachments included), read with the service credential.
 */
export interface VolumeDelta {
  before: Volume | null;
  after: Volume | null;
  /** When the watcher observed it (RFC 3339). */
  observedAt: string;
}

/** What the gateway tells a watcher about demand, for adaptive polling (OpenStack). */
export interface WatchDemand {
  /** Subscribers that may want this backend's changes. */
  subscribers: number;
  /** Volumes with an operation in progress: watch them fast until it ends. */
  pendingVolumes: readonly VolumeRef[];
  /** Nova servers with an attach or detach in progress (their attachment lists are read too). */
  pendingServers: readonly string[];
}

/** Options every watcher takes. */
export interface WatcherOptions {
  /** Receives every change, in the order observed. Must not throw. */
  onDeltas: (deltas: VolumeDelta[]) => void;
  /** Receives the watcher's state changes and source errors (logged by the server). */
  onStatus?: (s: WatcherStatus, err?: unknown) => void;
}

/** A running watcher of one backend. */
export interface VolumeWatcher {
  readonly backend: string;
  /** Starts reading; the first full read reports every volume as new only if `reportInitial`. */
  start(): void;
  /** Stops reading and closes its connections. */
  stop(): Promise<void>;
  status(): WatcherStatus;
  /** True once the view is complete and current (after the first full read, until a source failure). */
  readonly current: boolean;
  /**
   * Whether the view covers a scope (OpenStack: all projects for an admin service user, else its
   * own). @default every scope (Nomad lists `namespace=*`; its service token should read them all)
   */
  covers?(scope: string): boolean;
  /**
   * The one scope the view holds when it cannot hold them all (OpenStack with a service user that
   * is not an admin: its own project); null when it holds every scope or has not read yet.
   * @default null (every scope)
   */
  onlyScope?(): string | null;
  /** The watcher's view of one volume (service credential: callers need their own proof of access). */
  volume(ref: VolumeRef): Volume | undefined;
  /**
   * The whole view (empty before the first full read). A replica that takes over a backend's
   * watcher compares it with what subscribers were last told, so a hand-over neither repeats nor
   * misses a change.
   */
  volumes(): Volume[];
  /** Demand, for backends that poll: fast while something is pending, none while nobody listens. */
  setDemand(d: WatchDemand): void;
  /** Look at these soon (the gateway just accepted a mutation on them). */
  nudge(refs: readonly VolumeRef[], servers?: readonly string[]): void;
}

/** The `watching` facet: a live view kept with the gateway's own credential. */
export interface Watching {
  /**
   * The watcher, or null when the backend cannot watch (no service credential configured, or the
   * service credential may not read what a watcher needs); `why` says which.
   */
  createWatcher(o: WatcherOptions): VolumeWatcher | { unavailable: string };
  /**
   * Set where a current watcher's view may answer callers' volume reads (watch-fed reads): only
   * where access is per scope and no volume field depends on the caller. It says how a caller
   * proves its access to a scope first. @default unset: the view answers no caller's read
   */
  readonly viewReadProof?: ViewReadProof;
}

/** Reads volumes of one backend and scope with the caller's credential: one value or Error per ref, in order. */
export type CallerVolumeReads = (refs: readonly VolumeRef[]) => Promise<Array<Volume | null | Error>>;

/**
 * How a caller proves its access to one scope before a watcher's view answers its reads there:
 * the backend's access rule, with reads of the caller's own. The gateway asks it once per scope
 * and execution (domain/loaders.ts).
 */
export interface ViewReadProof {
  /**
   * Proves access to the scope of `refs` (one backend, one scope) with the caller's reads through
   * `read`. Answers the reads it made, for the first of `refs` in order (the gateway answers them
   * as read), and the error that refuses the scope, or null when access is proved.
   */
  prove(
    refs: readonly VolumeRef[],
    read: CallerVolumeReads,
  ): Promise<{ read: Array<Volume | null | Error>; refused: Error | null }>;
}

/** What a subscriber's credential may see of a backend. */
export interface AccessGrant {
  /** False: nothing of this scope (namespace or project). */
  allowed: boolean;
  /** The credential sees admin-only fields (OpenStack admin role). */
  admin: boolean;
  /** Until when this answer may be reused (ms since epoch); the cache also caps it by its TTL. */
  validUntil?: number;
}

/**
 * The `subscriberAccess` facet. Whether a subscriber may see a change, proved with the subscriber's own credential against the
 * backend (cached briefly by the gateway per credential and scope, never across credentials).
 */
export interface SubscriberAccess {
  /**
   * May `o.credential` read volumes in `scope` (Nomad namespace, OpenStack project)? `volume` is
   * the change's volume, which a backend may read to prove it (Nomad: `csi-read-volume` is per
   * namespace, so reading one volume proves the namespace).
   * @throws UnauthenticatedError when the credential is invalid or expired (ends the subscription)
   */
  checkAccess(scope: string, volume: VolumeRef, o: CallOptions): Promise<AccessGrant>;
  /**
   * Is `o.credential` a credential the backend knows (whatever it may read)? Asked when a
   * subscription starts, so that a bad token is told at once rather than on the first change.
   * Resolves for no token (nothing to check). A Nomad cluster with ACLs off knows every token.
   * @throws UnauthenticatedError when the backend does not know it (invalid, revoked, expired)
   */
  checkCredential(o: CallOptions): Promise<void>;
  /** The volume as a subscriber with `grant` may see it (admin-only fields removed for others). */
  redact(volume: Volume, grant: AccessGrant): Volume;
  /** The gateway's own credential for this backend (watchers, probes, operation checks); null when none. */
  serviceCredential(signal?: AbortSignal): Promise<CallerCredential | null>;
}
