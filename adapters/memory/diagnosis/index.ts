/**
 * The memory backend's `diagnosis` facet (adapters/contract/diagnosis.ts): every kind, found in the
 * state its data hold (docs/memory.md, "What the doctor finds"). `readFacts` is one look at the
 * store; the checks are pure.
 */
import type { CallOptions } from '../../contract/call-options';
import { PROBLEM_KINDS, type Diagnosis, type DiagnosisContext, type Finding } from '../../contract/diagnosis';
import type { Volume, VolumeRef } from '../../contract/model';
import type { MemoryContext } from '../context';
import { stuckClaims } from './claims';
import { missingVolumeDrift, volumeDrift } from './drift';
import { readFacts, type MemoryFacts } from './facts';
import { missingPlugins } from './plugins';
import { errorState, stuckTransition } from './status';
import type { MemoryThresholds } from './thresholds';

export type { MemoryFacts } from './facts';

export class MemoryDiagnosis implements Diagnosis<MemoryFacts> {
  readonly kinds = PROBLEM_KINDS;

  constructor(
    readonly ctx: MemoryContext,
    readonly thresholds: MemoryThresholds,
  ) {}

  readFacts(o: CallOptions): Promise<MemoryFacts> {
    return readFacts(this.ctx, o);
  }

  /** The status checks need only the volume; the others wait for the first facts. */
  checkVolume(v: Volume, facts: MemoryFacts | null, ctx: DiagnosisContext): Finding[] {
    const t = this.thresholds;
    // One list per volume, filled by each check: a full pass allocates little.
    const out: Finding[] = [];
    stuckTransition(v, ctx, t, out);
    errorState(v, ctx, out);
    if (!facts) return out;
    stuckClaims(v, facts, ctx, t, out);
    missingPlugins(v, facts, ctx, t, out);
    volumeDrift(v, facts, ctx, t, out);
    return out;
  }

  checkFacts(facts: MemoryFacts, inView: (ref: VolumeRef) => boolean, ctx: DiagnosisContext): Finding[] {
    return missingVolumeDrift(facts, inView, ctx, this.thresholds);
  }
}
