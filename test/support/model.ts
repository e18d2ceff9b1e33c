/** Unified-model objects for unit tests of backend-neutral code (diffs, logs, fan-out). */
import type { Attachment, Volume } from '../../adapters/contract/model';
import type { ChangeInput } from '../../subscriptions/events';
import { serverConsumer, type CinderVolumeDetails } from '../../adapters/openstack/model';

/** A Cinder volume in project `p1` of backend `os`, with the given overrides. */
export function cinderVolume(id: string, o: Partial<Volume<CinderVolumeDetails>> = {}): Volume<CinderVolumeDetails> {
  return {
    __typename: 'Volume',
    ref: { backend: 'os', namespace: 'p1', nativeId: id },
    name: `vol-${id}`,
    status: 'AVAILABLE',
    backendStatus: 'available',
    sizeBytes: 1 << 30,
    createdAt: '2026-11-24T10:00:00.000000Z',
    updatedAt: null,
    complete: true,
    attachments: [],
    details: {
      __typename: 'CinderVolumeDetails',
      cinderStatus: 'AVAILABLE',
      sizeGiB: 1,
      description: null,
      volumeType: 'lvmdriver-1',
      availabilityZone: 'nova',
      bootable: false,
      encrypted: false,
      multiattach: false,
      metadata: [],
      imageMetadata: [],
      migrationStatus: null,
      replicationStatus: null,
      userId: null,
      snapshotId: null,
      sourceVolumeId: null,
    },
    ...o,
  };
}

/** A Nova server attachment of `volume`. */
export function serverAttachment(volume: Volume, serverId: string, o: Partial<Attachment> = {}): Attachment {
  return {
    __typename: 'VolumeAttachment',
    volume: volume.ref,
    consumerId: serverId,
    state: 'ATTACHED',
    backendState: 'attached',
    stateReason: null,
    access: 'READ_WRITE',
    consumer: serverConsumer(serverId, volume.ref.backend),
    device: '/dev/vdb',
    attachedAt: '2026-11-24T10:01:00.000000Z',
    nativeId: `att-${serverId}`,
    tag: null,
    deleteOnTermination: null,
    ...o,
  };
}

/** An event log's change of volume `vol-<i>` (an UPDATED status), observed at a time that grows with `i`. */
export const statusChange = (i: number): ChangeInput => ({
  type: 'UPDATED',
  backend: 'east',
  scope: 'default',
  volumeId: `vol-${i}`,
  volume: cinderVolume(String(i)),
  attachment: null,
  attachmentId: null,
  previousStatus: 'AVAILABLE',
  previousAttachmentState: null,
  changedFields: ['status'],
  observedAt: new Date(1_700_000_000_000 + i).toISOString(),
  keys: {},
});
