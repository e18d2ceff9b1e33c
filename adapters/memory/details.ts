/** The memory backend's part of the unified model: what it holds of a volume beyond the core. */
import type { KeyValue, VolumeRef } from '../contract/model';

/** A memory volume's details (schema/memory/volume.graphql). */
export interface MemoryVolumeDetails {
  __typename: 'MemoryVolumeDetails';
  /** The volume these details belong to. */
  ref: VolumeRef;
  description: string | null;
  /** User metadata, sorted by key. */
  metadata: KeyValue[];
  /** Snapshots held of this volume. */
  snapshotCount: number;
}
