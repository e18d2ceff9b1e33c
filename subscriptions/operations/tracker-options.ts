/** The operation tracker's options and the shapes it is driven with (./tracker.ts). */
import type { CallerCredential } from '../../adapters/contract/call-options';
import type { PendingChange, TrackedChanges } from '../../adapters/contract/completion';
import type { OperationStore } from './store';
import type { OperationTracker } from './tracker';
import type { OperationKind, OperationRecord, OperationState } from '../../adapters/contract/model';

export interface OperationTrackerOptions {
  /**
   * The backend that evaluates a change's rule, by backend id; undefined when no such backend
   * (or one that tracks no changes) is configured, which fails the operation.
   */
  changes: (backendId: string) => TrackedChanges | undefined;
  /** @default a InProcessOperationStore */
  store?: OperationStore;
  /** First check this long after the start; later checks back off by 1.5× up to `maxPollMs`. @default 250 */
  pollMs?: number;
  /** @default 2000 */
  maxPollMs?: number;
  /** Deadline of an operation whose change names none. @default {@link DEFAULT_CHANGE_TIMEOUT_MS} (120000) */
  defaultTimeoutMs?: number;
  /**
   * Which operations are watched (the watcher directory, domain/watchers.ts): asked as an operation
   * starts. @default none: every operation is polled with the caller's credential
   */
  watchers?: WatchedScopes;
  /** Watched operations: the safety check's interval when the watcher reports nothing. @default 5000 */
  watchedCheckMs?: number;
  /** Called after every stored change (state, backend status or seen facts; `previous` null for a new one). Must not throw. */
  onChange?: (r: OperationRecord, previous: OperationState | null) => void;
  /** Called when a check fails (logged by the server). */
  onCheckError?: (r: OperationRecord, err: unknown) => void;
  /**
   * Called when this process stops driving an operation because another replica took it over or
   * finished it (this one was paused or cut off past its liveness TTL); `r` is its last record here. Must not throw.
   */
  onRelease?: (r: OperationRecord) => void;
  /**
   * Sharing with other replicas (a shared store's change stream and hand-over, ./replication.ts),
   * started with the tracker and closed with it. @default none: this process sees its own changes only
   */
  replication?: OperationReplication;
}

/** What shares a tracker's operations with other replicas; the tracker starts and closes it. */
export interface OperationReplication {
  start(tracker: OperationTracker): void;
  close(): Promise<void>;
}

/** The gateway's own credential for a backend; null when it has none (the check then fails over to the deadline). */
export type ServiceCredential = () => Promise<CallerCredential | null>;

/** What the tracker asks about watchers. */
export interface WatchedScopes {
  /**
   * The service credential to check a change of `backend` in `scope` with, while a watcher keeps
   * that scope current and reports its changes to {@link OperationTracker.observe}; undefined: poll
   * with the caller's credential.
   */
  serviceCredential(backend: string, scope: string): ServiceCredential | undefined;
}

export interface StartOperation {
  kind: OperationKind;
  backend: string;
  scope: string;
  targetId: string;
  credential: CallerCredential;
  requestId?: string;
  /**
   * Null when the backend finished synchronously: the operation starts SUCCEEDED. Else it starts
   * PENDING, or RUNNING when the backend saw the change `started`.
   */
  pending: PendingChange | null;
}
