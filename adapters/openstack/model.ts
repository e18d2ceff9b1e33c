/** The unified model's OpenStack-only parts: Cinder's volume details (GraphQL `CinderVolumeDetails`) and statuses, the server and host consumers. */
import { defineCarriedDetails } from '../contract/details';
import type {
  AttachmentConsumer,
  ConsumerBase,
  HostConsumer,
  KeyValue,
  Volume,
  VolumeDetails,
} from '../contract/model';

/** Cinder's statuses, one-to-one with the wire words (the adapter maps them). */
export type CinderVolumeStatus =
  | 'CREATING'
  | 'AVAILABLE'
  | 'RESERVED'
  | 'ATTACHING'
  | 'DETACHING'
  | 'IN_USE'
  | 'MAINTENANCE'
  | 'DELETING'
  | 'AWAITING_TRANSFER'
  | 'ERROR'
  | 'ERROR_DELETING'
  | 'BACKING_UP'
  | 'RESTORING_BACKUP'
  | 'ERROR_BACKING_UP'
  | 'ERROR_RESTORING'
  | 'ERROR_EXTENDING'
  | 'DOWNLOADING'
  | 'UPLOADING'
  | 'RETYPING'
  | 'EXTENDING'
  | 'ERROR_MANAGING'
  | 'MANAGING'
  | 'REVERTING'
  | 'OTHER';

/** What Cinder says of a volume that other backends have no word for. */
export interface CinderVolumeDetails extends VolumeDetails {
  __typename: 'CinderVolumeDetails';
  /** Cinder's status as a typed value (`OTHER` for a word this gateway does not know; `backendStatus` keeps it). */
  cinderStatus: CinderVolumeStatus;
  /** Cinder counts in whole GiB. */
  sizeGiB: number;
  description: string | null;
  volumeType: string | null;
  availabilityZone: string | null;
  bootable: boolean;
  encrypted: boolean;
  multiattach: boolean;
  metadata: KeyValue[];
  /** Glance metadata copied to the volume (show/detail only). */
  imageMetadata: KeyValue[];
  /** Admin only; null otherwise. */
  migrationStatus: string | null;
  replicationStatus: string | null;
  userId: string | null;
  /** Cinder id of the snapshot it was created from. */
  snapshotId: string | null;
  /** Cinder id of the volume it was cloned from. */
  sourceVolumeId: string | null;
}

// Cinder's status word mirrors the volume's status.
defineCarriedDetails('CinderVolumeDetails', ['cinderStatus']);

/** Whether details are Cinder's. */
export const isCinderDetails = (d: VolumeDetails): d is CinderVolumeDetails => d.__typename === 'CinderVolumeDetails';

/** The Cinder part of a volume this backend mapped; null for another backend's. */
export const cinderDetails = (v: Volume | null | undefined): CinderVolumeDetails | null =>
  v && isCinderDetails(v.details) ? v.details : null;

/** An OpenStack (Nova) server; its name and state are read from Nova when asked. */
export interface VolumeServerConsumer extends ConsumerBase {
  __typename: 'VolumeServerConsumer';
  serverId: string;
  /** The OpenStack backend whose Nova reports it. */
  backend: string;
}

/** A Nova server as an attachment's consumer. */
export const serverConsumer = (serverId: string, backend: string): VolumeServerConsumer => ({
  __typename: 'VolumeServerConsumer',
  serverId,
  backend,
});

/**
 * A host attached through Cinder's attachments API (or legacy os-attach with a host name) as an
 * attachment's consumer: the core host consumer, its name null unless the caller is an admin or
 * service (Cinder hides it otherwise).
 */
export const hostConsumer = (hostName: string | null): HostConsumer => ({ __typename: 'VolumeHostConsumer', hostName });

export const isServerConsumer = (c: AttachmentConsumer): c is VolumeServerConsumer =>
  c.__typename === 'VolumeServerConsumer';
export const isHostConsumer = (c: AttachmentConsumer): c is HostConsumer => c.__typename === 'VolumeHostConsumer';
