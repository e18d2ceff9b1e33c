/**
 * ATTACHMENT_DRIFT: Nova and Cinder disagree about an attachment, past the grace period (counted
 * from when the doctor first saw the disagreement, `drift:<server>`): a normal attach or detach is
 * seen by the two APIs at different moments. Three shapes (Nova's 2023.2 spec on cleaning up
 * dangling volume attachments describes the first two):
 *
 * - Nova lists the volume on a server (a block device mapping) and Cinder has no attachment of it
 *   to that server: a dangling mapping. Not while the volume is in a transition that passes
 *   through this (attach, detach, Nova creating the volume it boots from): STUCK_TRANSITION
 *   times those. When Cinder has no such volume at all, `checkVolumeless` reports it.
 * - Cinder has an attachment to a server whose mappings do not list the volume.
 * - Cinder has an attachment to a server the listing lacks: DELETED when the listing covers every
 *   project (an admin's), else NOT_VISIBLE (deleted, or in a project the service user cannot see).
 *
 * Evidence about another project's server shows its id only (the listing gives nothing more).
 */
import type {
  DiagnosisContext,
  DriftEvidence,
  DriftSide,
  Finding,
  Remedy,
  ServerPresence,
} from '../../contract/diagnosis';
import type { Volume, VolumeRef } from '../../contract/model';
import { cinderServerAttachments, LISTED_ONLY, novaAttachmentInView, sideOf } from './evidence';
import type { NovaFacts } from './facts';
import * as r from './remedies';
import type { DiagnosisThresholds } from './thresholds';

/** Cinder statuses during which Nova lists a volume Cinder has not attached (yet, or any more). */
const NOVA_FIRST: ReadonlySet<string> = new Set(['creating', 'downloading', 'reserved', 'attaching', 'detaching']);

/** What the listing says of `server`, seen from a volume in `namespace`. */
export function presenceOf(facts: NovaFacts, server: string, namespace: string): ServerPresence {
  const s = facts.servers.get(server);
  if (s) return s.projectId === namespace ? 'LISTED' : 'OTHER_PROJECT';
  return facts.allProjects ? 'DELETED' : 'NOT_VISIBLE';
}

interface Drift {
  ref: VolumeRef;
  server: string;
  presence: ServerPresence;
  computeSide: DriftSide | null;
  volumeSide: DriftSide | null;
  summary: string;
  remedies: Remedy[];
}

/** The finding of a drift past its grace; null while inside it or while the gateway's own operation runs. */
function finding(d: Drift, ctx: DiagnosisContext, t: DiagnosisThresholds): Finding | null {
  // Asked in every pass the drift lasts, so its grace counts from the first.
  const first = ctx.firstSeen(d.ref, `drift:${d.server}`);
  // Only a Nova listing begun past the grace confirms it: a watcher's change checked against the
  // last pass's listing (up to an interval old) would see every new attach as drift.
  const readAt = ctx.factsReadAt ?? ctx.now;
  if (ctx.operationRunning(d.ref) || ctx.now - first < t.driftGraceMs || readAt - first < t.driftGraceMs) return null;
  const evidence: DriftEvidence = {
    __typename: 'VolumeAttachmentDriftEvidence',
    serverId: d.server,
    server: d.presence,
    computeSide: d.computeSide,
    volumeSide: d.volumeSide,
  };
  return {
    kind: 'ATTACHMENT_DRIFT',
    severity: d.presence === 'NOT_VISIBLE' ? 'WARNING' : 'CRITICAL',
    volume: d.ref,
    subject: d.server,
    startedAt: null,
    summary: d.summary,
    evidence,
    remedies: d.remedies,
  };
}

const REFUSED_DETACH =
  'Nova first asks Cinder to begin detaching, which Cinder refuses (400) unless the volume is in-use: while Cinder shows it available, nothing changes.';

/** Remedies of a Cinder attachment Nova does not back, safest first. */
function cinderOnlyRemedies(
  ref: VolumeRef,
  server: string,
  presence: ServerPresence,
  attachmentId: string | null,
): Remedy[] {
  const out: Remedy[] = [];
  // Cinder lets the owner delete it when Nova answers that the server has no such volume (cinder/volume/api.py attachment_deletion_allowed).
  if (attachmentId)
    out.push({
      action: 'DELETE_ATTACHMENT',
      does: `Deletes Cinder's attachment ${attachmentId} (the attachments API, 3.27+).`,
      risk: "Cinder lets a volume's owner delete an attachment with a connection only when Nova lists no such attachment on the server; a device the host kept stays until the host's admin removes it.",
      mutation: null,
      cli: `openstack --os-volume-api-version 3.27 volume attachment delete ${attachmentId}`,
      who: 'VOLUME_WRITER',
    });
  if (presence === 'LISTED') out.push(r.rebootServer(server));
  if (presence === 'OTHER_PROJECT') out.push({ ...r.rebootServer(server), who: 'OPERATOR' });
  out.push({
    ...r.forceDetach(ref, attachmentId),
    risk:
      presence === 'NOT_VISIBLE'
        ? 'If the server exists in a project the gateway cannot see, its guest loses the disk while it may be writing.'
        : presence === 'DELETED'
          ? "The deleted server's host may keep a connection to the volume until its admin removes it; no data changes."
          : r.forceDetach(ref, attachmentId).risk,
  });
  return out;
}

/** The drift findings of `v` (one per disagreeing server). */
export function checkDrift(
  v: Volume,
  facts: NovaFacts | null,
  ctx: DiagnosisContext,
  t: DiagnosisThresholds,
): Finding[] {
  if (facts === null) return [];
  const id = v.ref.nativeId.toLowerCase();
  const nova = facts.holders.get(id) ?? [];
  // Neither side lists an attachment: nothing to compare (most volumes of a pass).
  if (nova.length === 0 && v.attachments.length === 0) return [];
  const cinder = cinderServerAttachments(v);
  const word = v.backendStatus ?? '';
  const drifts: Drift[] = [];
  for (const server of nova) {
    if (cinder.has(server) || NOVA_FIRST.has(word)) continue;
    const inView = novaAttachmentInView(v, server);
    drifts.push({
      ref: v.ref,
      server,
      presence: presenceOf(facts, server, v.ref.namespace),
      computeSide: inView ? sideOf(inView, null) : LISTED_ONLY,
      volumeSide: null,
      summary: `Nova lists volume ${v.ref.nativeId} on server ${server}, but Cinder (${word}) has no attachment of it to that server: a dangling block device mapping.`,
      // Nova's detach needs Cinder to begin detaching, which it refuses unless the volume is in-use
      // (another attachment holds it): offered only then, never as a mutation known to fail.
      remedies:
        word === 'in-use'
          ? [r.detachFromServer(v.ref, server, REFUSED_DETACH), r.rebootServer(server)]
          : [r.rebootServer(server)],
    });
  }
  for (const [server, a] of cinder) {
    if (nova.includes(server)) continue;
    const presence = presenceOf(facts, server, v.ref.namespace);
    const where =
      presence === 'DELETED'
        ? 'which Nova says does not exist'
        : presence === 'NOT_VISIBLE'
          ? "which the gateway's Nova listing does not show (deleted, or in a project its service user cannot see)"
          : 'whose block device mappings do not list it';
    drifts.push({
      ref: v.ref,
      server,
      presence,
      computeSide: null,
      volumeSide: sideOf(a, a.backendState),
      summary: `Cinder holds an attachment of volume ${v.ref.nativeId} to server ${server}, ${where}.`,
      remedies: cinderOnlyRemedies(v.ref, server, presence, a.nativeId),
    });
  }
  return drifts.flatMap((d) => finding(d, ctx, t) ?? []);
}

/** Drift about volumes the view lacks: Nova lists a volume on a server and Cinder has no such volume. */
export function checkVolumeless(
  facts: NovaFacts,
  inView: (ref: VolumeRef) => boolean,
  backend: string,
  ctx: DiagnosisContext,
  t: DiagnosisThresholds,
): Finding[] {
  const out: Finding[] = [];
  for (const s of facts.servers.values()) {
    for (const volume of s.volumeIds) {
      // A server's volumes are in its project (Nova attaches what the server's project may read).
      const ref: VolumeRef = { backend, namespace: s.projectId, nativeId: volume };
      if (inView(ref)) continue;
      const f = finding(
        {
          ref,
          server: s.id,
          presence: 'LISTED',
          computeSide: LISTED_ONLY,
          volumeSide: null,
          summary: `Nova lists volume ${volume} on server ${s.id}, but Cinder has no such volume.`,
          remedies: [r.rebootServer(s.id)],
        },
        ctx,
        t,
      );
      if (f) out.push(f);
    }
  }
  return out;
}
