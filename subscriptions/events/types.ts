/** Change events: what watchers observe and subscribers receive, in the unified model's words. */

/** What happened to a volume or an attachment. */
export type ChangeType =
  | 'CREATED'
  | 'UPDATED'
  | 'DELETED'
  | 'CLAIMED'
  | 'RELEASED'
  | 'ATTACHING'
  | 'ATTACHED'
  | 'DETACHING'
  | 'DETACHED'
  | 'STATUS_CHANGED';

/** One change as a watcher (or the gateway itself) saw it, before the log gives it a cursor. */
export interface ChangeInput {
  type: ChangeType;
  /** Configured backend id. */
  backend: string;
  /** Namespace or project: what authorization is checked against. */
  scope: string;
  /** Global id of the volume the change is about. */
  volumeId: string;
  /** Global id of the attachment, for attachment changes. */
  attachmentId?: string;
  /** The volume's status before the change, in the gateway's vocabulary; null when new. */
  previousStatus: string | null;
  /** Names of the unified fields that changed. */
  changedFields: string[];
  /** When the change was observed (RFC 3339). */
  observedAt: string;
}

/** A change in the log: the input plus its position. */
export interface ChangeEvent extends ChangeInput {
  /** Opaque; pass as `since` to resume after this event. */
  cursor: string;
}
