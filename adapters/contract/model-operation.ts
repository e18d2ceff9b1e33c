/** Tracked operations as the unified model has them (the tracker's records). */
import type { CompletionRule } from './completion';

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
  rule?: CompletionRule;
}
