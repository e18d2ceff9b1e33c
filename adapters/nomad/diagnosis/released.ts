/**
 * Which of a volume's claims are being released, since when, and what they block. A claim is
 * released when its allocation is terminal (`Allocation.TerminalStatus`, hashicorp/nomad
 * nomad/structs/structs.go: client status complete, failed or lost, or desired stop or evict) or
 * gone: Nomad's volume still lists the allocation id in ReadAllocs/WriteAllocs after the allocation
 * was garbage-collected, with no stub (`volumes/results.ts` keeps such a claim, its consumer's
 * fields null). Nomad keeps a released claim, counted, until its volume watcher or claim GC frees
 * it (nomad/volumewatcher/, nomad/core_sched.go `csiVolumeClaimGC`).
 */
import type { DiagnosisContext } from '../../contract/diagnosis';
import type { Attachment, Volume } from '../../contract/model';
import type { NomadVolumeDetails, VolumeAllocationConsumer } from '../model';

const TERMINAL_CLIENT = new Set(['complete', 'failed', 'lost']);
const STOPPING = new Set(['stop', 'evict']);

/** A claim whose allocation is terminal or gone. */
export interface ReleasedClaim {
  attachment: Attachment;
  allocation: VolumeAllocationConsumer;
  /** False when Nomad no longer has the allocation. */
  found: boolean;
  /**
   * When the release began, at the latest, ms since epoch: the allocation's last write (Nomad's
   * ModifyTime, at or after it became terminal, so the age is never overstated); for a gone
   * allocation, when the doctor first saw the claim released.
   */
  since: number;
}

const allocationOf = (a: Attachment): VolumeAllocationConsumer | null =>
  a.consumer.__typename === 'VolumeAllocationConsumer' ? (a.consumer as VolumeAllocationConsumer) : null;

/** Nomad no longer has the allocation: the volume lists its id without a stub. */
export const isGone = (c: VolumeAllocationConsumer): boolean => c.clientStatus === null && c.desiredStatus === null;

/** Terminal or gone; a pending, running or disconnected (`unknown`) allocation is neither. */
export const isReleased = (c: VolumeAllocationConsumer): boolean =>
  isGone(c) || TERMINAL_CLIENT.has(c.clientStatus ?? '') || STOPPING.has(c.desiredStatus ?? '');

/** The doctor's name for a claim's release (`DiagnosisContext.firstSeen`). */
export const releaseCondition = (allocationId: string): string => `claim-released:${allocationId}`;

/**
 * The volume's released claims. Asks `firstSeen` for each (so a claim whose allocation is later
 * garbage-collected keeps the time the doctor first saw it released).
 */
export function releasedClaims(v: Volume, ctx: DiagnosisContext): ReleasedClaim[] {
  const out: ReleasedClaim[] = [];
  for (const attachment of v.attachments) {
    const allocation = allocationOf(attachment);
    if (allocation === null || !isReleased(allocation)) continue;
    const seen = ctx.firstSeen(v.ref, releaseCondition(allocation.allocationId));
    const written = allocation.updatedAt === null ? NaN : Date.parse(allocation.updatedAt);
    out.push({ attachment, allocation, found: !isGone(allocation), since: Number.isNaN(written) ? seen : written });
  }
  return out;
}

/**
 * Whether this claim, while held, makes Nomad refuse another claim of the volume (its
 * `HasFreeWriteClaims`/`HasFreeReadClaims`, nomad/structs/csi.go): any claim of a single-node
 * volume, a write claim of a multi-node single-writer one. The scheduler then reports "CSI volume …
 * has exhausted its available writer claims" (scheduler/feasible/feasible.go; hashicorp/nomad#10927).
 */
export function blocksOtherClaims(d: NomadVolumeDetails, a: Attachment): boolean {
  switch (d.accessMode) {
    case 'SINGLE_NODE_WRITER':
    case 'SINGLE_NODE_READER_ONLY':
      return true;
    case 'MULTI_NODE_SINGLE_WRITER':
      return a.access === 'READ_WRITE';
    default:
      return false;
  }
}

/** `12 min`, `40 s`. */
/** A moment for a summary, to the second: a summary names when, never how long ago, so it stays the same while the problem lasts. */
export const at = (ms: number): string => new Date(Math.floor(ms / 1000) * 1000).toISOString().replace('.000Z', 'Z');

/** The allocation in a sentence: `allocation 8f3a1c2e (job db, failed)`, `garbage-collected allocation 8f3a1c2e`. */
export function describeAllocation(c: ReleasedClaim): string {
  const id = c.allocation.allocationId.slice(0, 8);
  if (!c.found) return `garbage-collected allocation ${id}`;
  const status = [c.allocation.clientStatus, c.allocation.desiredStatus].filter((s) => s !== null).join('/');
  return `allocation ${id} (job ${c.allocation.jobId ?? '?'}, ${status})`;
}
