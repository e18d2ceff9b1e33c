/**
 * The Nomad checks of one volume (docs/nomad.md, "Volume doctor"): pure functions of the volume as
 * the watcher's view holds it, the last pass's plugin facts and the doctor's context.
 *
 * - `STUCK_CLAIM`: a claim whose allocation is terminal or gone, held longer than `stuckClaimMs`.
 * - `CLAIM_ON_MISSING_PLUGIN` (plugins.ts): a released claim whose node plugin is unhealthy, or a
 *   volume that needs a controller while none is healthy, for longer than `missingPluginMs`.
 *
 * Each kind is judged on its own: a claim held past its threshold because its node plugin is down
 * shows as both (the plugin is the cause, its remedy comes first). Never a problem: a claim of a
 * pending or running allocation; a release within its threshold; a volume one of the gateway's own
 * operations is changing; a volume the view holds only as a list stub (no claims known).
 */
import type { DiagnosisContext, Finding } from '../../contract/diagnosis';
import type { Volume } from '../../contract/model';
import { nomadDetails, type NomadVolumeDetails } from '../model';
import type { NomadDiagnosisFacts } from './facts';
import { pluginFindings } from './plugins';
import { at, blocksOtherClaims, describeAllocation, releasedClaims, type ReleasedClaim } from './released';
import { detachFromNode, forceDeregister, runSystemGc, waitForClaimGc } from './remedies';
import type { NomadDiagnosisThresholds } from './thresholds';

function stuckClaim(v: Volume, d: NomadVolumeDetails, c: ReleasedClaim, allReleased: boolean): Finding {
  const nodeId = c.allocation.nodeId;
  const blocks = blocksOtherClaims(d, c.attachment);
  const kind = c.attachment.access === 'READ_WRITE' ? 'write' : 'read';
  const consequence = blocks
    ? `Nomad refuses ${kind === 'write' ? 'a new writer' : 'new claims'} until it is released ("exhausted its available ${kind === 'write' ? 'writer' : 'reader'} claims")`
    : 'Nomad has not released it';
  return {
    kind: 'STUCK_CLAIM',
    severity: blocks ? 'CRITICAL' : 'WARNING',
    volume: v.ref,
    subject: `claim:${c.allocation.allocationId}`,
    startedAt: new Date(c.since).toISOString(),
    summary: `The ${kind} claim of ${describeAllocation(c)}${nodeId === null ? '' : ` on node ${nodeId}`} has outlived its allocation since ${at(c.since)}, and ${consequence}.`,
    evidence: {
      __typename: 'VolumeClaimEvidence',
      attachment: c.attachment,
      consumerFound: c.found,
      consumerStatus: c.allocation.clientStatus,
      consumerDesiredStatus: c.allocation.desiredStatus,
      nodeId,
    },
    remedies: [
      waitForClaimGc(),
      ...(nodeId === null ? [] : [detachFromNode(v.ref, nodeId)]),
      runSystemGc(),
      ...(allReleased ? [forceDeregister(v.ref)] : []),
    ],
  };
}

/** One volume's findings. */
export function checkVolume(
  v: Volume,
  facts: NomadDiagnosisFacts | null,
  ctx: DiagnosisContext,
  t: NomadDiagnosisThresholds,
): Finding[] {
  const d = nomadDetails(v);
  if (d === null || !v.complete || ctx.operationRunning(v.ref)) return [];
  const released = releasedClaims(v, ctx);
  const allReleased = released.length > 0 && released.length === v.attachments.length;
  const stuck = released
    .filter((c) => ctx.now - c.since >= t.stuckClaimMs)
    .map((c) => stuckClaim(v, d, c, allReleased));
  return [...stuck, ...pluginFindings(v, d, released, facts, ctx, t)];
}
