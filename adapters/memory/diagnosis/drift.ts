/**
 * ATTACHMENT_DRIFT: the hosts' own records (`hosts[].volumes`, the compute side) and the volumes'
 * attachments (the volume side) disagree, past `graceMs`. Only when the data declare `hosts`:
 * - an attachment to a host the backend does not know (gone: DELETED);
 * - an attachment to a host that reports its volumes and does not list this one (LISTED);
 * - a host that lists a volume with no attachment to it, or a volume that does not exist
 *   (`checkFacts`).
 * An attachment being made (`ATTACHING`) is not on the host yet and is left out. Attach and
 * detach keep both records (data/hosts.ts), so drift comes only from the data. No time of its own:
 * the grace counts from when the doctor first saw it.
 */
import type { DiagnosisContext, DriftEvidence, DriftSide, Finding, Remedy } from '../../contract/diagnosis';
import type { Attachment, Volume, VolumeRef } from '../../contract/model';
import { volumeKey } from '../data/store';
import type { MemoryFacts } from './facts';
import { attach, detach, manual } from './remedies';
import type { MemoryThresholds } from './thresholds';

const volumeSide = (a: Attachment): DriftSide => ({
  attachmentId: a.consumerId,
  state: a.backendState,
  device: a.device,
  attachedAt: a.attachedAt,
});

/** A host's record names only the volume. */
const COMPUTE_SIDE: DriftSide = { attachmentId: null, state: 'attached', device: null, attachedAt: null };

const unlist = (host: string, ref: VolumeRef): Remedy =>
  manual({
    action: 'DETACH_ON_HOST',
    does: `Detach the volume on host ${host} and take ${ref.namespace}/${ref.nativeId} off the host's list in the data file.`,
    risk: `Whatever on ${host} still uses the device loses it.`,
    who: 'OPERATOR',
  });

function finding(
  ref: VolumeRef,
  host: string,
  evidence: DriftEvidence,
  summary: string,
  remedies: Remedy[],
  critical: boolean,
): Finding {
  return {
    kind: 'ATTACHMENT_DRIFT',
    severity: critical ? 'CRITICAL' : 'WARNING',
    volume: ref,
    subject: host,
    startedAt: null,
    summary,
    evidence,
    remedies,
  };
}

/** Whether a drift of `side` with `host` is past its grace period (asked only while it lasts). */
const past = (ctx: DiagnosisContext, t: MemoryThresholds, ref: VolumeRef, side: string, host: string): boolean =>
  ctx.now - ctx.firstSeen(ref, `drift:${side}:${host}`) >= t.graceMs;

const NONE: readonly string[] = [];

/** Adds the volume's drift, both ways, to `out`. */
export function volumeDrift(
  v: Volume,
  facts: MemoryFacts,
  ctx: DiagnosisContext,
  t: MemoryThresholds,
  out: Finding[],
): void {
  const hosts = facts.hosts;
  if (!hosts) return;
  const listedBy = facts.hostVolumes.get(volumeKey(v.ref.namespace, v.ref.nativeId)) ?? NONE;
  for (const a of v.attachments) {
    const host = a.consumer.nodeId;
    if (!host || a.state === 'ATTACHING') continue;
    const known = hosts.get(host);
    if (known && (!known.volumes || listedBy.includes(host))) continue;
    if (!past(ctx, t, v.ref, 'volume', host)) continue;
    out.push(
      finding(
        v.ref,
        host,
        {
          __typename: 'VolumeAttachmentDriftEvidence',
          serverId: host,
          server: known ? 'LISTED' : 'DELETED',
          computeSide: null,
          volumeSide: volumeSide(a),
        },
        known
          ? `Attachment ${a.consumerId} names host ${host}, which does not list the volume.`
          : `Attachment ${a.consumerId} names host ${host}, which no longer exists.`,
        [
          detach(v.ref, a.consumerId, {
            action: 'DETACH_STALE_RECORD',
            does: `Detaches attachment ${a.consumerId}, so the volume's record matches host ${host}'s.`,
            risk: known
              ? `Nothing if ${host} does not use the volume, as its own record says.`
              : `Nothing: host ${host} is gone.`,
            who: 'VOLUME_WRITER',
          }),
        ],
        false,
      ),
    );
  }
  for (const host of listedBy) {
    if (v.attachments.some((a) => a.consumer.nodeId === host) || !past(ctx, t, v.ref, 'compute', host)) continue;
    out.push(
      finding(
        v.ref,
        host,
        {
          __typename: 'VolumeAttachmentDriftEvidence',
          serverId: host,
          server: 'LISTED',
          computeSide: COMPUTE_SIDE,
          volumeSide: null,
        },
        `Host ${host} lists the volume as attached, but the volume has no attachment to it.`,
        [
          attach(v.ref, host, {
            action: 'RECORD_ATTACHMENT',
            does: `Attaches the volume to host ${host}, so the volume's record matches the host's (detach it after to release both).`,
            risk: `Nothing changes on ${host}; the volume shows in use by it.`,
            who: 'VOLUME_WRITER',
          }),
          unlist(host, v.ref),
        ],
        // The volume looks free while a host uses it: another attach could write it twice.
        true,
      ),
    );
  }
}

/** Hosts listing volumes the view lacks (deleted, or never there). */
export function missingVolumeDrift(
  facts: MemoryFacts,
  inView: (ref: VolumeRef) => boolean,
  ctx: DiagnosisContext,
  t: MemoryThresholds,
): Finding[] {
  const out: Finding[] = [];
  for (const [key, hosts] of facts.hostVolumes) {
    const [namespace, nativeId] = key.split('/') as [string, string];
    const ref: VolumeRef = { backend: facts.backend, namespace, nativeId };
    if (inView(ref)) continue;
    for (const host of hosts) {
      if (ctx.now - ctx.firstSeen(ref, `drift:compute:${host}`) < t.graceMs) continue;
      const evidence: DriftEvidence = {
        __typename: 'VolumeAttachmentDriftEvidence',
        serverId: host,
        server: 'LISTED',
        computeSide: COMPUTE_SIDE,
        volumeSide: null,
      };
      out.push(
        finding(
          ref,
          host,
          evidence,
          `Host ${host} lists volume ${key} as attached, but no such volume exists.`,
          [unlist(host, ref)],
          false,
        ),
      );
    }
  }
  return out;
}
