/** Change events: what watchers observe and subscribers receive, in the unified model's words. */
import type { OpenProblem } from '../../adapters/contract/diagnosis';
import type { Attachment, AttachmentState, Volume, VolumeStatus } from '../../adapters/contract/model';

/**
 * What happened to a volume or an attachment (the schema's `VolumeChangeType` minus SUBSCRIBED,
 * which the gateway sends itself and never logs).
 */
export type ChangeType =
  | 'CREATED'
  | 'UPDATED'
  | 'DELETED'
  | 'STATUS_CHANGED'
  | 'CLAIMED'
  | 'RELEASED'
  | 'ATTACHING'
  | 'ATTACHED'
  | 'DETACHING'
  | 'DETACHED'
  | 'ATTACHMENT_ERROR'
  | 'PROBLEM_OPENED'
  | 'PROBLEM_UPDATED'
  | 'PROBLEM_RESOLVED';

/** The volume doctor's changes (`volumeProblemChanged`); `volumeChanged` and `attachmentChanged` never carry them. */
export const PROBLEM_CHANGE_TYPES: ReadonlySet<ChangeType> = new Set([
  'PROBLEM_OPENED',
  'PROBLEM_UPDATED',
  'PROBLEM_RESOLVED',
]);

/** Attachment-level change types: the ones `attachmentChanged` receives. */
export const ATTACHMENT_CHANGE_TYPES: ReadonlySet<ChangeType> = new Set([
  'CLAIMED',
  'RELEASED',
  'ATTACHING',
  'ATTACHED',
  'DETACHING',
  'DETACHED',
  'ATTACHMENT_ERROR',
]);

/**
 * One change as a watcher (or the gateway itself) saw it, before the log gives it a cursor. Plain
 * JSON data, so a shared log (Redis) can carry it as it is.
 */
export interface ChangeInput {
  type: ChangeType;
  /** Configured backend id. */
  backend: string;
  /** Namespace or project: what authorization is checked against. */
  scope: string;
  /** Global id of the volume the change is about. */
  volumeId: string;
  /**
   * The volume as it now is (for DELETED the last state seen), as the watcher read it with the
   * gateway's service credential: fields only some callers may see are removed per subscriber by
   * the backend's access check (`SubscriberAccess.redact`), never sent as they are.
   */
  volume: Volume;
  /** The attachment, for attachment-level types (for DETACHED/RELEASED the last state seen). */
  attachment: Attachment | null;
  /** Global id of the attachment, for attachment-level types. */
  attachmentId: string | null;
  /** The volume's status before the change; null when new. */
  previousStatus: VolumeStatus | null;
  /** The attachment's state before the change; null when new or not an attachment change. */
  previousAttachmentState: AttachmentState | null;
  /** Names of the unified fields that changed (`Volume`'s, or `VolumeAttachment`'s for attachment changes). */
  changedFields: string[];
  /** When the change was observed (RFC 3339). */
  observedAt: string;
  /**
   * The W3C `traceparent` of the gateway mutation that caused the change, when tracing is on and a
   * mutation did: the delivery's span links to it (docs/tracing.md). @default none
   */
  cause?: string;
  /**
   * The replica that sent this change itself as it accepted an attach or detach (the gateway's
   * announcement, feed.ts), so the replica watching the backend folds the watcher's later sighting
   * of the same state into it (transitions.ts). @default none: a watcher's change
   */
  announcedBy?: string;
  /**
   * A view field changed with no event to send (`updatedAt`, `backendStatus`, indexes: see "One
   * event per transition" in docs/subscriptions.md): the shared log carries it so every replica's
   * view answers the same, and it is never delivered to subscribers. @default false
   */
  viewOnly?: boolean;
  /**
   * What `attachmentChanged` targets match on (from the attachment's consumer): consumer id, Nomad
   * node id, Nova server id. Empty for volume-level changes.
   */
  keys: ChangeKeys;
  /**
   * For the doctor's changes (PROBLEM_*): the problem (for RESOLVED as last seen). `volume` is then
   * the watcher's volume, or a stub with the problem's ref when the view lacks it (access is
   * checked on its scope; the event primes no loader with it). @default none
   */
  problem?: OpenProblem;
}

/** Index keys of an attachment change. */
export interface ChangeKeys {
  consumer?: string;
  node?: string;
  server?: string;
}

/** A change in the log: the input plus its position. */
export interface ChangeEvent extends ChangeInput {
  /** Opaque; pass as `since` to resume after this event. */
  cursor: string;
}
