/**
 * The Nomad completion rule, as data. Nomad answers every write once it is done but one: a detach
 * (`CSIVolume.Unpublish` with a GC claim, hashicorp/nomad nomad/csi_endpoint.go) answers once the
 * GC claim is checkpointed ready-to-free, and the past claims it released are freed afterwards by
 * the volume watcher (nomad/volumewatcher/), whenever it gets to them. Until then the volume still
 * lists them (IN_USE, the claims DETACHING). `claimsFreed` waits for them: judged by a pure function
 * of the rule and the volume read; `check.ts` does the reading. docs/operations.md has the table.
 */
import type { ChangeCheck, ChangeProgress, CompletionRule, RuleValue } from '../../contract/completion';
import type { Volume, VolumeRef } from '../../contract/model';

const CLAIMS_FREED = 'claimsFreed';

const text = (v: RuleValue | undefined): string => (typeof v === 'string' ? v : '');

/** The rule's names this adapter stores with operations. */
export const isNomadRule = (name: string): boolean => name === CLAIMS_FREED;

/**
 * The claims a detach from `nodeId` frees, as the volume lists them: the released ones (DETACHING:
 * their allocation stopped) on that node, and those of allocations Nomad has collected, whose node
 * it no longer shows. Live allocations keep theirs.
 */
export function releasedClaims(v: Volume, nodeId: string): string[] {
  return v.attachments
    .filter((a) => a.state === 'DETACHING' && (a.consumer.nodeId ?? nodeId) === nodeId)
    .map((a) => a.consumerId);
}

/** The allocations `seen.claims` holds (a JSON list: ids are the wire's map keys, so no separator is safe). */
function claimsOf(seen: Record<string, RuleValue>): string[] | null {
  if (typeof seen.claims !== 'string') return null;
  const parsed: unknown = JSON.parse(seen.claims);
  return Array.isArray(parsed) ? parsed.filter((x): x is string => typeof x === 'string') : [];
}

/**
 * Evaluates `rule` against the volume as read (null: Nomad no longer has it, so it holds no
 * claim). The claims waited for are those the first read found released (kept in `seen.claims`):
 * a claim released after it was not this detach's to free. SUCCEEDED once the volume lists none of
 * them; `backendStatus` is the volume's.
 */
export function evaluate(rule: CompletionRule, v: Volume | null): ChangeCheck {
  if (!isNomadRule(rule.name))
    return {
      progress: { state: 'FAILED', reason: `the gateway has no completion rule "${rule.name}"`, backendStatus: null },
      seen: rule.seen,
    };
  if (v === null) return { progress: { state: 'SUCCEEDED', backendStatus: null }, seen: rule.seen };
  const waited = claimsOf(rule.seen) ?? releasedClaims(v, text(rule.params.nodeId));
  const held = v.attachments.some((a) => waited.includes(a.consumerId));
  const progress: ChangeProgress = { state: held ? 'RUNNING' : 'SUCCEEDED', backendStatus: v.backendStatus };
  return { progress, seen: { ...rule.seen, claims: JSON.stringify(waited) } };
}

/** The volume a rule reads. */
export const ruleVolume = (backend: string, rule: CompletionRule): VolumeRef => ({
  backend,
  namespace: text(rule.params.namespace),
  nativeId: text(rule.params.volumeId),
});

/** Rules by change. */
export const rules = {
  /** A detach from `nodeId`: done when the volume lists none of the claims it released. */
  claimsFreed: (ref: VolumeRef, nodeId: string): CompletionRule => ({
    name: CLAIMS_FREED,
    params: { volumeId: ref.nativeId, namespace: ref.namespace, nodeId },
    seen: {},
  }),
} as const;
