/**
 * What the OpenStack checks show as evidence: a status with how long it has held it, and the two
 * services' sides of an attachment. Cinder records no transition time, and `updated_at` moves on
 * any write (metadata included), so "since" is the earlier of `updated_at` and the moment the
 * doctor first saw the status: the transition began at or before both, and the age is never
 * overstated.
 */
import type { DiagnosisContext, DriftSide, StatusEvidence } from '../../contract/diagnosis';
import type { Attachment, Volume } from '../../contract/model';
import { isServerConsumer } from '../model';

/** The status evidence of `v`'s current status (asks `firstSeen` for it, so the doctor keeps counting). */
export function statusEvidence(v: Volume, ctx: DiagnosisContext, thresholdMs: number | null): StatusEvidence {
  const word = v.backendStatus ?? '';
  const first = ctx.firstSeen(v.ref, word);
  const written = v.updatedAt === null ? NaN : Date.parse(v.updatedAt);
  const since = Number.isNaN(written) ? first : Math.min(written, first);
  return {
    __typename: 'VolumeStatusEvidence',
    status: v.status,
    backendStatus: word,
    updatedAt: v.updatedAt,
    since: new Date(since).toISOString(),
    sinceSource: 'LAST_WRITE_OR_FIRST_SEEN',
    thresholdMs,
  };
}

/** How long the evidence's status has been held at `now`, ms. */
export const ageOf = (e: StatusEvidence, now: number): number => now - Date.parse(e.since);

/**
 * Cinder's own attachments of `v` to servers, by lower-case server id. The watcher's view adds
 * the attachments Nova lists and Cinder does not (nova/results.ts `toServerAttachment`); those
 * carry the volume's status word, while every attachment Cinder lists is `attached` (Cinder lists
 * no other), which tells the two apart.
 */
export function cinderServerAttachments(v: Volume): Map<string, Attachment> {
  const out = new Map<string, Attachment>();
  for (const a of v.attachments)
    if (a.backendState === 'attached' && isServerConsumer(a.consumer)) out.set(a.consumer.serverId.toLowerCase(), a);
  return out;
}

/** What the view shows of Nova's side for `server` (when the watcher read that server's list); null otherwise. */
export function novaAttachmentInView(v: Volume, server: string): Attachment | null {
  return (
    v.attachments.find(
      (a) =>
        a.backendState !== 'attached' && isServerConsumer(a.consumer) && a.consumer.serverId.toLowerCase() === server,
    ) ?? null
  );
}

/** One side of an attachment from an attachment of the view. */
export const sideOf = (a: Attachment, state: string | null): DriftSide => ({
  attachmentId: a.nativeId,
  state,
  device: a.device,
  attachedAt: a.attachedAt,
});

/** Nova's side when the listing names the volume but the view has no detail of it (the listing gives ids only). */
export const LISTED_ONLY: DriftSide = { attachmentId: null, state: null, device: null, attachedAt: null };
