/**
 * The OpenStack backend's `diagnosis` facet (adapters/contract/diagnosis.ts; docs/openstack.md,
 * "Volume doctor"): STUCK_TRANSITION (`stuck.ts`), ERROR_STATE (`error-state.ts`) and
 * ATTACHMENT_DRIFT (`drift.ts`) on the watcher's view of Cinder, with one Nova listing per pass
 * (`facts.ts`) for the drift and for telling a shelved-offloaded server's `reserved` volume from
 * a stuck attach. Thresholds: `thresholds.ts`; remedies: `remedies.ts`.
 */
import type { CallOptions } from '../../contract/call-options';
import type { DiagnosisContext, Finding, ProblemKind } from '../../contract/diagnosis';
import type { Volume, VolumeRef } from '../../contract/model';
import type { OpenStackClient } from '../client';
import { checkDrift, checkVolumeless } from './drift';
import { checkError } from './error-state';
import { readNovaFacts, type NovaFacts } from './facts';
import { checkStuck } from './stuck';
import type { DiagnosisThresholds } from './thresholds';

export type { NovaFacts } from './facts';
export type { DiagnosisThresholds } from './thresholds';
export { DIAGNOSIS_DEFAULTS, resolveThresholds } from './thresholds';

/** Whether the watcher's view holds a volume. */
export type InView = (ref: VolumeRef) => boolean;

/** The kinds the OpenStack checks find. */
export const OPENSTACK_PROBLEM_KINDS: readonly ProblemKind[] = ['STUCK_TRANSITION', 'ERROR_STATE', 'ATTACHMENT_DRIFT'];

/** What the checks need of their backend. */
export interface DiagnosisDeps {
  backend: string;
  client: OpenStackClient;
  thresholds: DiagnosisThresholds;
  /** Servers per page of the Nova listing. @default 1000 (Nova's osapi_max_limit) */
  serverPageSize?: number;
}

/** The pass's one extra read: Nova's servers with their volumes (every page). */
export const readFacts = (d: DiagnosisDeps, o: CallOptions): Promise<NovaFacts> =>
  readNovaFacts(d.client, o, d.serverPageSize);

/** One volume's findings. Pure. */
export function checkVolume(d: DiagnosisDeps, v: Volume, facts: NovaFacts | null, ctx: DiagnosisContext): Finding[] {
  const out: Finding[] = [];
  const stuck = checkStuck(v, facts, ctx, d.thresholds);
  if (stuck) out.push(stuck);
  const error = checkError(v, ctx);
  if (error) out.push(error);
  out.push(...checkDrift(v, facts, ctx, d.thresholds));
  return out;
}

/** Findings about volumes the view lacks. Pure. */
export const checkFacts = (d: DiagnosisDeps, facts: NovaFacts, inView: InView, ctx: DiagnosisContext): Finding[] =>
  checkVolumeless(facts, inView, d.backend, ctx, d.thresholds);
