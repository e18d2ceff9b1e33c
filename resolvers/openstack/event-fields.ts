/** Where a subscription event gets the OpenStack types' resolved fields (resolvers/event-fields.ts says what `view` and `read` mean). */
import type { EventFieldSources } from '../../subscriptions/live/view';

export const openstackEventFields: EventFieldSources = {
  'VolumeServerConsumer.server': 'view',
  // Read from Nova (batched per backend, cached per credential in events).
  'VolumeServerConsumer.name': 'read',
  'VolumeServerConsumer.status': 'read',
};
