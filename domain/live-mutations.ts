/**
 * What the domain tells the live path about a mutation it accepted. Declared here, beside the
 * execution context that carries it (`GatewayContext.live`), so the context needs nothing of
 * `subscriptions/`; the live hub's feed implements it (subscriptions/live/feed.ts).
 */
import type { AttachTarget, DetachTarget } from '../adapters/contract/call-inputs';
import type { Attachment, VolumeRef } from '../adapters/contract/model';

/** An attach or detach the gateway just accepted (the live path shows it before the watcher does). */
export interface AcceptedChange {
  kind: 'ATTACH' | 'DETACH';
  volume: VolumeRef;
  target: AttachTarget | DetachTarget;
  /** The attachment the backend answered the attach with, if any. */
  attachment?: Attachment | null;
  /** False when the backend finished at once (nothing to show ahead of the watcher). */
  pending: boolean;
}

/**
 * What mutations tell the live path (`GatewayServices.live`). Never throws.
 */
export interface LiveMutations {
  /** An accepted attach or detach: appended as ATTACHING/DETACHING at once, and the backend's watcher is nudged. */
  accepted(c: AcceptedChange): void;
  /**
   * A tracked mutation changed (or started changing) this volume: called by `track` for every
   * volume operation, inside the mutation's span, so the volume's events that follow link to its
   * trace (docs/tracing.md). Does nothing without tracing.
   */
  changing(volume: VolumeRef): void;
}
