/**
 * The Subscription fields and VolumeChangeEvent. Subscriptions run through the live hub
 * (subscriptions/live): it executes the subscription document once per event and group with the
 * event (or the operation's state) as the root field's value, so each field's `resolve` hands that
 * value on; `subscribe` is never used (graphql-ws calls the hub), and says so if called.
 */
import { UnsupportedByBackendError } from '../adapters/contract/errors';
import type { OperationRecord } from '../adapters/contract/model';
import type {
  SubscriptionResolvers,
  VolumeChangeEventResolvers,
  VolumeChangeType,
  VolumeProblemEventResolvers,
} from '../schema/generated/resolvers-types';
import type { EventView } from '../subscriptions/live/view';

const notHere = (): never => {
  throw new UnsupportedByBackendError(
    'gateway',
    'subscriptions outside graphql-ws',
    'subscribe over graphql-ws at the GraphQL URL',
  );
};

export const subscriptionFields: SubscriptionResolvers = {
  volumeChanged: { subscribe: notHere, resolve: (root: { volumeChanged: EventView }) => root.volumeChanged },
  attachmentChanged: {
    subscribe: notHere,
    resolve: (root: { attachmentChanged: EventView }) => root.attachmentChanged,
  },
  operationUpdated: {
    subscribe: notHere,
    resolve: (root: { operationUpdated: OperationRecord }) => root.operationUpdated,
  },
  volumeProblemChanged: {
    subscribe: notHere,
    resolve: (root: { volumeProblemChanged: EventView }) => root.volumeProblemChanged,
  },
};

/** The event types a subscription field's events carry, in its own enum's words. */
const PROBLEM_EVENT_TYPES = {
  PROBLEM_OPENED: 'OPENED',
  PROBLEM_UPDATED: 'UPDATED',
  PROBLEM_RESOLVED: 'RESOLVED',
  SUBSCRIBED: 'SUBSCRIBED',
  BACKEND_DROPPED: 'BACKEND_DROPPED',
} as const;

/** A volume doctor's event: the view of a logged PROBLEM_* change, SUBSCRIBED or BACKEND_DROPPED. */
export const volumeProblemEventType: VolumeProblemEventResolvers = {
  type: (e) => PROBLEM_EVENT_TYPES[e.type as keyof typeof PROBLEM_EVENT_TYPES],
  problem: (e) => e.problem ?? null,
};

/** The event view already holds every field (views of the model's volume and attachment). */
export const volumeChangeEventType: VolumeChangeEventResolvers = {
  // volumeChanged and attachmentChanged never match a PROBLEM_* change (subscribers.ts).
  type: (e) => e.type as VolumeChangeType,
  cursor: (e) => e.cursor,
  observedAt: (e) => e.observedAt,
  volumeId: (e) => e.volumeId ?? null,
  volume: (e) => e.volume ?? null,
  previousStatus: (e) => e.previousStatus ?? null,
  attachment: (e) => e.attachment ?? null,
  previousAttachmentState: (e) => e.previousAttachmentState ?? null,
  changedFields: (e) => e.changedFields,
  omittedBackends: (e) => e.omittedBackends,
};
