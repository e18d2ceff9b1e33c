/**
 * ERROR_STATE: a Cinder volume in an `error*` status (`error`, `error_deleting`,
 * `error_extending`, `error_backing-up`, `error_restoring`, `error_managing` …): a dead end that
 * needs a person, so CRITICAL at once. The remedies depend on the status: Cinder's ordinary
 * delete takes `error`, `error_restoring`, `error_extending` and `error_managing`
 * (cinder/volume/api.py `delete`), the rest need an admin.
 */
import type { DiagnosisContext, Finding, Remedy } from '../../contract/diagnosis';
import type { Volume } from '../../contract/model';
import { statusEvidence } from './evidence';
import * as r from './remedies';

/** Whether Cinder's word is an error status. */
export const isErrorWord = (word: string | null): word is string => word !== null && word.startsWith('error');

const settled = (v: Volume): r.ResetTarget =>
  v.attachments.some((a) => a.backendState === 'attached') ? 'IN_USE' : 'AVAILABLE';

const CHECK_BACKEND =
  'If the storage backend disagrees (the volume missing or half-made there), Cinder then offers a volume that fails on use.';

/** The remedies of `v` in error status `word`, safest first. */
export function errorRemedies(v: Volume, word: string): Remedy[] {
  const ref = v.ref;
  const reset = (risk: string): Remedy =>
    r.resetStatus(ref, settled(v), { does: 'Sets Cinder back to its settled status (os-reset_status).', risk });
  switch (word) {
    case 'error':
      return [
        reset(`${CHECK_BACKEND} Check the cinder-volume log first: a failed create has no data behind it.`),
        r.deleteVolume(ref, 'Deletes the volume and whatever data the backend holds of it.'),
      ];
    case 'error_deleting':
      return [
        r.resetStatus(ref, 'ERROR', {
          does: 'Sets Cinder to error (os-reset_status), so its owner may delete it again.',
          risk: 'The backend failed the delete once; a second one may fail the same way.',
        }),
        r.forceDelete(
          ref,
          "Cinder forgets the volume even if the backend's delete fails again: the backend can keep an orphan.",
        ),
      ];
    case 'error_extending':
      return [
        reset('Cinder keeps the old size; if the backend did grow the volume, the two disagree until the next extend.'),
      ];
    case 'error_restoring':
      return [
        reset("The volume holds a partial restore: its data is not the backup's."),
        r.deleteVolume(ref, 'Deletes the volume and its partly restored data.'),
      ];
    case 'error_managing':
      return [
        r.deleteVolume(
          ref,
          "Removes Cinder's record of a volume it failed to take over; the backend's volume is left to its admin.",
        ),
      ];
    default:
      return [reset(CHECK_BACKEND)];
  }
}

/** The ERROR_STATE finding of `v`, if any. */
export function checkError(v: Volume, ctx: DiagnosisContext): Finding | null {
  const word = v.backendStatus;
  if (!isErrorWord(word)) return null;
  const evidence = statusEvidence(v, ctx, null);
  // A tracked operation of the gateway's sees the error itself and fails: not reported twice.
  if (ctx.operationRunning(v.ref)) return null;
  return {
    kind: 'ERROR_STATE',
    severity: 'CRITICAL',
    volume: v.ref,
    subject: word,
    startedAt: evidence.since,
    summary: `Cinder shows volume ${v.ref.nativeId} ${word}: a dead end until someone acts.`,
    evidence,
    remedies: errorRemedies(v, word),
  };
}
