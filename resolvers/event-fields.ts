/**
 * Where a subscription event gets each field whose resolver is its own (subscriptions/live/
 * event-fields.ts reads the classification): `view` when the resolver answers from its parent
 * object, the event's (primed) volume or the gateway's own state (the operation tracker, the
 * registry); `read` when it may call a backend (another volume, a snapshot, a backend's health
 * probe, a server's attachments, the caller's namespace). A field with no resolver of its own reads
 * its parent object and is not listed. Each backend's resolvers classify their own types
 * (`resolvers/<kind>/event-fields.ts`, registered with the kind); test/unit/event-fields.test.ts
 * fails when a field with a resolver of its own is reachable from a subscription and unclassified.
 */
import type { EventFieldSources } from '../subscriptions/live/view';

/** The core types' fields. */
export const coreEventFields: EventFieldSources = {
  'VolumeChangeEvent.type': 'view',
  'VolumeChangeEvent.cursor': 'view',
  'VolumeChangeEvent.observedAt': 'view',
  'VolumeChangeEvent.volumeId': 'view',
  'VolumeChangeEvent.volume': 'view',
  'VolumeChangeEvent.previousStatus': 'view',
  'VolumeChangeEvent.attachment': 'view',
  'VolumeChangeEvent.previousAttachmentState': 'view',
  'VolumeChangeEvent.changedFields': 'view',
  'VolumeChangeEvent.omittedBackends': 'view',
  'VolumeProblemEvent.type': 'view',
  'VolumeProblemEvent.problem': 'view',
  'Volume.id': 'view',
  'Volume.backend': 'view',
  'Volume.namespace': 'view',
  'Volume.nativeId': 'view',
  // The watcher's volumes are full reads; a stub would be completed from the primed volume loader.
  'Volume.sizeBytes': 'view',
  'Volume.attachments': 'view',
  'Volume.operations': 'view',
  // The doctor's own state, like the operation tracker's.
  'Volume.problems': 'view',
  'VolumeProblem.volumeId': 'view',
  'VolumeProblem.volume': 'read',
  'VolumeProblem.backend': 'view',
  'VolumeStatusEvidence.thresholdSeconds': 'view',
  'VolumeRemedyMutation.variables': 'view',
  'StorageBackend.capabilities': 'view',
  'StorageBackend.health': 'read',
  'StorageBackend.callerNamespace': 'read',
  // The attachment's own volume: the event's, primed.
  'VolumeAttachment.id': 'view',
  'VolumeAttachment.volume': 'view',
  'VolumeAttachment.consumer': 'view',
  'Server.volumeAttachments': 'read',
  'Server.volumeAttachmentList': 'read',
  'VolumeOperation.id': 'view',
  'VolumeOperation.backend': 'view',
  'VolumeOperation.target': 'read',
  'VolumeOperation.createdAt': 'view',
  'VolumeOperation.updatedAt': 'view',
  'VolumeOperation.deadlineAt': 'view',
  'VolumeSnapshot.id': 'view',
  'VolumeSnapshot.backend': 'view',
  'VolumeSnapshot.volume': 'read',
  'VolumeSnapshot.plugin': 'read',
};

/** The core's classification with every backend's (a field classified twice is a bug). */
export function gatewayEventFields(backends: readonly EventFieldSources[]): EventFieldSources {
  const out: Record<string, 'view' | 'read'> = { ...coreEventFields };
  for (const part of backends)
    for (const [field, source] of Object.entries(part)) {
      if (field in out) throw new Error(`event field ${field} is classified twice`);
      out[field] = source;
    }
  return Object.freeze(out);
}
