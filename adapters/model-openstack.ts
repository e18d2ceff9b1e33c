/** The unified model's OpenStack-only parts: Cinder volume details and statuses, Nova servers. */
import type { KeyValue } from './contract/model';

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
export interface CinderVolumeDetails {
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

/** An OpenStack (Nova) server as Nova shows it. */
export interface NovaServer {
  backend: string;
  projectId: string;
  id: string;
  name: string;
  status: string;
  vmState: string | null;
  /** Volume ids Nova lists for it. */
  volumeIds: string[];
  createdAt: string | null;
}

/** A compute server referenced by key (an entity a compute subgraph may own). */
export interface ServerRef {
  __typename: 'Server';
  /** The Nova server UUID. */
  id: string;
}
