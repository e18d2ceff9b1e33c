/** Nomad snapshots in the unified model: what a plugin's controller holds, as Nomad relays it. */
import type { Snapshot, VolumeRef } from '../../contract/model';
import { nonEmpty, num, secondsToIso } from '../wire/scalars';
import type { WireSnapshot } from '../wire/types';

/** What the caller knows of a snapshot that the wire entry may lack. */
export interface KnownSnapshot {
  /** The plugin asked (list) or used (create). */
  pluginId: string;
  /** The name asked for (create replies leave Name empty). */
  name?: string;
  /** The Nomad volume it was taken of, when known (entries name only the provider's volume). */
  sourceVolume?: VolumeRef;
}

/**
 * Snapshot entries carry only provider fields (hashicorp/nomad nomad/csi_endpoint.go
 * `CreateSnapshot`, `ListSnapshots`): create replies have an empty PluginID and Name and every
 * entry an empty SourceVolumeID, so the caller passes what it knows.
 * Nomad has no snapshot status or description.
 */
export function toSnapshot(backend: string, w: WireSnapshot, known: KnownSnapshot): Snapshot {
  const pluginId = nonEmpty(w.PluginID) ?? known.pluginId;
  return {
    __typename: 'VolumeSnapshot',
    backend,
    scope: pluginId,
    nativeId: w.ID,
    name: nonEmpty(w.Name) ?? known.name ?? null,
    pluginId,
    sourceExternalVolumeId: nonEmpty(w.ExternalSourceVolumeID),
    sourceVolume: known.sourceVolume ?? null,
    sizeBytes: num(w.SizeBytes),
    createdAt: secondsToIso(w.CreateTime),
    ready: w.IsReady,
    backendStatus: null,
    description: null,
  };
}
