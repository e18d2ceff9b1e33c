/**
 * STUCK_CLAIM: an attachment held for a workload (a claim) whose workload is terminal (`complete`,
 * `failed`, `lost`) or gone from the data, for longer than `stuckClaimMs`. Nothing in the memory
 * backend releases such a claim by itself (it has no claim GC): detaching it does. Since: the
 * workload's `updatedAt` (when it took its terminal status), else when the doctor first saw it so.
 */
import type { DiagnosisContext, Finding } from '../../contract/diagnosis';
import type { Attachment, Volume } from '../../contract/model';
import type { MemoryHostConsumer } from '../model';
import { iso, millis, since } from './clock';
import type { MemoryFacts } from './facts';
import { detach } from './remedies';
import type { MemoryThresholds } from './thresholds';

const TERMINAL: ReadonlySet<string> = new Set(['complete', 'failed', 'lost']);

/** The workload an attachment is held for; undefined for a host's own attachment. */
export const workloadOf = (a: Attachment): string | undefined => (a.consumer as MemoryHostConsumer).workloadId;

/** Whether the attachment's workload is terminal or gone (a claim nothing needs). */
export function claimIdle(a: Attachment, facts: MemoryFacts): boolean {
  const id = workloadOf(a);
  if (id === undefined) return false;
  const w = facts.workloads.get(id);
  return !w || TERMINAL.has(w.status);
}

/** Adds the volume's stuck claims to `out`. */
export function stuckClaims(
  v: Volume,
  facts: MemoryFacts,
  ctx: DiagnosisContext,
  t: MemoryThresholds,
  out: Finding[],
): void {
  for (const a of v.attachments) {
    const id = workloadOf(a);
    if (id === undefined || !claimIdle(a, facts) || a.state === 'DETACHING') continue;
    const w = facts.workloads.get(id);
    const start = since(ctx, v.ref, `claim:${a.consumerId}`, w ? millis(w.updatedAt) : null);
    if (ctx.now - start < t.stuckClaimMs) continue;
    const host = a.consumer.nodeId ?? null;
    out.push({
      kind: 'STUCK_CLAIM',
      // A writer's claim keeps other writers out; a reader's only holds the host's device.
      severity: a.access === 'READ_WRITE' ? 'CRITICAL' : 'WARNING',
      volume: v.ref,
      subject: a.consumerId,
      startedAt: w && millis(w.updatedAt) !== null ? iso(start) : null,
      summary: w
        ? `Attachment ${a.consumerId} on host ${host} is still held for workload ${id}, which is ${w.status}.`
        : `Attachment ${a.consumerId} on host ${host} is still held for workload ${id}, which no longer exists.`,
      evidence: {
        __typename: 'VolumeClaimEvidence',
        attachment: a,
        consumerFound: w !== undefined,
        consumerStatus: w?.status ?? null,
        consumerDesiredStatus: w ? (w.desiredStatus ?? 'run') : null,
        nodeId: host,
      },
      remedies: [
        detach(v.ref, a.consumerId, {
          action: 'DETACH_CLAIM',
          does: `Detaches the volume from host ${host}, releasing the claim of the finished workload.`,
          risk: 'Nothing while the workload is finished: no process uses the volume through this claim.',
          who: 'VOLUME_WRITER',
        }),
      ],
    });
  }
}
