/**
 * The Nomad backend's `diagnosis` facet (adapters/contract/diagnosis.ts): its kinds, the one extra
 * read of a pass (plugin health, facts.ts) and the pure checks (checks.ts), with the thresholds
 * the backend's settings give (thresholds.ts).
 */
import type { CallOptions } from '../../contract/call-options';
import type { Diagnosis, DiagnosisContext, Finding, ProblemKind } from '../../contract/diagnosis';
import type { Volume } from '../../contract/model';
import type { NomadContext } from '../context';
import { checkVolume } from './checks';
import { readFacts, type NomadDiagnosisFacts } from './facts';
import { DEFAULT_NOMAD_DIAGNOSIS_THRESHOLDS, type NomadDiagnosisThresholds } from './thresholds';

export type { NomadDiagnosisFacts } from './facts';
export { DEFAULT_NOMAD_DIAGNOSIS_THRESHOLDS, type NomadDiagnosisThresholds } from './thresholds';

/** The kinds the Nomad checks find. */
export const NOMAD_PROBLEM_KINDS: readonly ProblemKind[] = ['STUCK_CLAIM', 'CLAIM_ON_MISSING_PLUGIN'];

export class NomadDiagnosis implements Diagnosis<NomadDiagnosisFacts> {
  readonly kinds = NOMAD_PROBLEM_KINDS;
  readonly #ctx: NomadContext;
  readonly #thresholds: NomadDiagnosisThresholds;

  /** @param thresholds @default DEFAULT_NOMAD_DIAGNOSIS_THRESHOLDS */
  constructor(ctx: NomadContext, thresholds: Partial<NomadDiagnosisThresholds> = {}) {
    this.#ctx = ctx;
    this.#thresholds = { ...DEFAULT_NOMAD_DIAGNOSIS_THRESHOLDS, ...thresholds };
  }

  readFacts(o: CallOptions): Promise<NomadDiagnosisFacts> {
    return readFacts(this.#ctx, o);
  }

  checkVolume(volume: Volume, facts: NomadDiagnosisFacts | null, ctx: DiagnosisContext): Finding[] {
    return checkVolume(volume, facts, ctx, this.#thresholds);
  }
}
