/**
 * The memory backend's own part of an input: a delete's `cascade` (delete the volume's snapshots
 * too). The other kinds' options (plugin secrets, a forced delete) mean nothing here and are
 * ignored, as a lab backend should let the same requests through.
 */
import type { DeleteVolumeOptions } from '../../contract/backend';
import { InputField } from '../../contract/errors';
import { ownPart } from '../../contract/input-parts';

/** Whether a delete also deletes the volume's snapshots. @default false */
export function deleteCascades(opts: DeleteVolumeOptions): boolean {
  return ownPart<{ cascade?: boolean | null }>(opts.own, new InputField(''))?.cascade === true;
}
