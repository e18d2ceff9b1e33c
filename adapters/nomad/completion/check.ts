/**
 * Checks a change: one read of the volume its rule names (`GET /v1/volume/csi/:id`), judged by
 * `rules.ts`. The caller's credential (or, for a watched operation, the service token) comes with
 * the call options; the rule holds none.
 */
import type { CallOptions } from '../../contract/call-options';
import type { ChangeCheck, CompletionRule } from '../../contract/completion';
import type { NomadContext } from '../context';
import { getVolume } from '../volumes/operations';
import { evaluate, isNomadRule, ruleVolume } from './rules';

export async function checkChange(ctx: NomadContext, rule: CompletionRule, o: CallOptions): Promise<ChangeCheck> {
  // An unknown name evaluates to FAILED with the reason, without a read.
  if (!isNomadRule(rule.name)) return evaluate(rule, null);
  return evaluate(rule, await getVolume(ctx, ruleVolume(ctx.backend, rule), o));
}
