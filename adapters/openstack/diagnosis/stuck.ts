/**
 * STUCK_TRANSITION: a Cinder volume in a timed transitional status (thresholds.ts) for longer than
 * that status's threshold, with no operation of the gateway's driving it. `reserved` is judged
 * only once Nova's listing is read: it is the normal status of a shelved-offloaded server's
 * volumes (Nova's shelve-offload leaves a connector-less attachment), and only the listing says
 * whether the server holding it is one.
 */
import type { DiagnosisContext, Finding, Remedy } from '../../contract/diagnosis';
import type { Volume } from '../../contract/model';
import { cinderDetails } from '../model';
import { ageOf, cinderServerAttachments, statusEvidence } from './evidence';
import { heldByShelvedOffloaded, type NovaFacts } from './facts';
import * as r from './remedies';
import { thresholdFor, type DiagnosisThresholds } from './thresholds';

const UNSEEN_HOST =
  'A status reset does not detach anything on the host: it can leave the volume attached there, and a second server attaching it then corrupts its data.';

/** The status a reset puts a volume back to: in-use while Cinder lists attachments, else available. */
const settled = (v: Volume): r.ResetTarget =>
  v.attachments.some((a) => a.backendState === 'attached') ? 'IN_USE' : 'AVAILABLE';

/** The remedies of a volume stuck in `word`, safest first. */
export function stuckRemedies(v: Volume, word: string): Remedy[] {
  const ref = v.ref;
  switch (word) {
    case 'detaching': {
      const attached = [...cinderServerAttachments(v)];
      return [
        r.rollDetaching(ref),
        ...attached.map(([server]) =>
          r.detachFromServer(
            ref,
            server,
            'Nova refuses while Cinder says detaching (it begins by asking Cinder to, which needs in-use): roll back first. The guest must release the disk; libvirt waits device_detach_timeout × device_detach_attempts for it.',
          ),
        ),
        r.forceDetach(ref, v.attachments.find((a) => a.backendState === 'attached')?.nativeId ?? null),
        r.resetStatus(ref, 'AVAILABLE', {
          detached: true,
          does: 'Sets Cinder to available and detached (os-reset_status).',
          risk: UNSEEN_HOST,
        }),
      ];
    }
    case 'attaching':
      return [
        r.unreserve(ref),
        r.forceDetach(ref, null),
        r.resetStatus(ref, settled(v), {
          detached: settled(v) === 'AVAILABLE',
          does: 'Sets Cinder back to its settled status (os-reset_status).',
          risk: UNSEEN_HOST,
        }),
      ];
    case 'reserved':
      return [
        r.deleteReservedAttachment(ref),
        r.resetStatus(ref, settled(v), {
          detached: settled(v) === 'AVAILABLE',
          does: 'Sets Cinder back to its settled status (os-reset_status).',
          risk: UNSEEN_HOST,
        }),
      ];
    case 'creating':
    case 'deleting':
      return [
        r.resetStatus(ref, 'ERROR', {
          does: `Sets Cinder to error (os-reset_status), so its owner may delete it${word === 'deleting' ? ' again' : ''}.`,
          risk: `If the storage backend is still ${word} it, that goes on unseen; a later delete may fail again or leave the backend's volume behind.`,
        }),
        r.forceDelete(
          ref,
          `Cinder forgets the volume even when the backend's ${word === 'creating' ? 'create finishes later' : 'delete fails again'}: the backend can keep an orphan (data included) that Cinder no longer lists.`,
        ),
      ];
    case 'extending':
      return [
        r.resetStatus(ref, settled(v), {
          does: 'Sets Cinder back to its settled status (os-reset_status); the size stays the old one.',
          risk: 'If the backend did grow the volume, Cinder and the backend disagree on its size until the next extend.',
        }),
      ];
    default:
      return [
        r.resetStatus(ref, settled(v), {
          does: 'Sets Cinder back to its settled status (os-reset_status).',
          risk: `The ${word} copy may still be running on the backend or the cinder-volume/backup host: the volume, or the image or backup being made, can be left incomplete.`,
        }),
      ];
  }
}

/** The STUCK_TRANSITION finding of `v`, if any. */
export function checkStuck(
  v: Volume,
  facts: NovaFacts | null,
  ctx: DiagnosisContext,
  t: DiagnosisThresholds,
): Finding | null {
  const word = v.backendStatus ?? '';
  const threshold = thresholdFor(word, cinderDetails(v)?.sizeGiB ?? 0, t);
  if (threshold === null) return null;
  if (word === 'reserved' && (facts === null || heldByShelvedOffloaded(facts, v.ref.nativeId.toLowerCase())))
    return null;
  // Asked in every pass, even while the gateway's own operation runs, so the age counts from the start.
  const evidence = statusEvidence(v, ctx, threshold);
  if (ctx.operationRunning(v.ref) || ageOf(evidence, ctx.now) < threshold) return null;
  return {
    kind: 'STUCK_TRANSITION',
    severity: 'WARNING',
    volume: v.ref,
    subject: word,
    startedAt: evidence.since,
    // No age in the sentence: a summary stays the same while the problem lasts (`startedAt` dates it).
    summary: `Cinder has shown volume ${v.ref.nativeId} ${word} since ${evidence.since}, past its ${Math.round(threshold / 1000)} s threshold.`,
    evidence,
    remedies: stuckRemedies(v, word),
  };
}
