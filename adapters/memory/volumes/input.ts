/**
 * The memory backend's own part of an input: a delete's `cascade` (delete the volume's snapshots
 * too). The other kinds' options (plugin secrets, a forced delete) mean nothing here and are
 * ignored, as a lab backend should let the same requests through; a listing by plugin matches
 * nothing (no memory volume has a plugin).
 */
import type { DeleteVolumeOptions, VolumeListQuery } from '../../contract/call-inputs';
import { InputField } from '../../contract/errors';
import { ownPart } from '../../contract/input-parts';

/** Whether a delete also deletes the volume's snapshots. @default false */
export function deleteCascades(opts: DeleteVolumeOptions): boolean {
  return ownPart<{ cascade?: boolean | null }>(opts.own, new InputField(''))?.cascade === true;
}

/** Whether a listing asks for a plugin's volumes (`filter.plugin`), which no memory volume is. */
export function listsByPlugin(q: VolumeListQuery): boolean {
  const plugin = ownPart<{ filter?: { plugin?: string | null } | null }>(q.own, new InputField(''))?.filter?.plugin;
  return plugin !== null && plugin !== undefined;
}
