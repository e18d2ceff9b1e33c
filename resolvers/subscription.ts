/**
 * The Subscription fields and VolumeChangeEvent. Subscriptions run through the live hub
 * (subscriptions/live): it executes the subscription document once per event and group with the
 * event (or the operation's state) as the root field's value, so each field's `resolve` hands that
 * value on; `subscribe` is never used (graphql-ws calls the hub), and says so if called.
 */
import { UnsupportedByBackendError } from '../adapters/contract/errors';
import type { OperationRecord } from '../adapters/contract/model';
import type { SubscriptionResolvers, VolumeChangeEventResolvers } from '../schema/generated/resolvers-types';
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
};

/** The event view already holds every field (views of the model's volume and attachment). */
export const volumeChangeEventType: VolumeChangeEventResolvers = {
  type: (e) => e.type,
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
