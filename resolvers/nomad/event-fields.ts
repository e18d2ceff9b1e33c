/** Where a subscription event gets the Nomad types' resolved fields (resolvers/event-fields.ts says what `view` and `read` mean). */
import type { EventFieldSources } from '../../subscriptions/live/view';

export const nomadEventFields: EventFieldSources = {
  'VolumeAllocationConsumer.node': 'view',
  'NomadNode.volumeClaims': 'read',
  'NomadNode.volumeClaimList': 'read',
  'NomadVolumeDetails.plugin': 'read',
  // The watcher's volumes are full reads: the (read) details come with the event's volume.
  'NomadVolumeDetails.providerVersion': 'view',
  'NomadVolumeDetails.requestedMinBytes': 'view',
  'NomadVolumeDetails.requestedMaxBytes': 'view',
  'NomadVolumeDetails.requestedCapabilities': 'view',
  'NomadVolumeDetails.requestedTopologies': 'view',
  'NomadVolumeDetails.mountOptions': 'view',
  'NomadVolumeDetails.parameters': 'view',
  'NomadVolumeDetails.context': 'view',
  'NomadVolumeDetails.cloneId': 'view',
  'NomadVolumeDetails.snapshotId': 'view',
  'StoragePlugin.id': 'view',
  'StoragePlugin.backend': 'view',
  // A plugin read for the list stub's missing parts.
  'StoragePlugin.version': 'read',
  'StoragePlugin.controllerFeatures': 'read',
  'StoragePlugin.instances': 'read',
};
