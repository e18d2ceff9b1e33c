/** The memory backend's part of the unified model: what it holds of a volume beyond the core, and its consumers. */
import type { HostConsumer, KeyValue, VolumeDetails, VolumeRef } from '../contract/model';

/** A memory volume's details (schema/memory/volume.graphql). */
export interface MemoryVolumeDetails extends VolumeDetails {
  __typename: 'MemoryVolumeDetails';
  /** The volume these details belong to. */
  ref: VolumeRef;
  description: string | null;
  /** User metadata, sorted by key. */
  metadata: KeyValue[];
  /** Snapshots held of this volume. */
  snapshotCount: number;
}

/** A host holding a memory volume: the core host consumer, always named. */
export interface MemoryHostConsumer extends HostConsumer {
  hostName: string;
  /** The host, as `attachmentChanged` node targets and the list's node filter match it. */
  nodeId: string;
  /**
   * The workload holding the volume through this attachment (a claim: `AttachmentData.workload`);
   * absent when the host itself holds it. Model only: the doctor reads it, the schema's
   * `VolumeHostConsumer` does not show it.
   */
  workloadId?: string;
}

/** The host consumer of an attachment to `host`, held for `workload` when one is given. */
export const hostConsumer = (host: string, workload?: string): MemoryHostConsumer =>
  workload === undefined
    ? { __typename: 'VolumeHostConsumer', hostName: host, nodeId: host }
    : { __typename: 'VolumeHostConsumer', hostName: host, nodeId: host, workloadId: workload };

/** The details of a memory volume, whatever the model's type says (a memory volume has no others). */
export const memoryDetails = (d: VolumeDetails): MemoryVolumeDetails | undefined =>
  d.__typename === 'MemoryVolumeDetails' ? (d as MemoryVolumeDetails) : undefined;
