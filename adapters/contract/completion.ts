/**
 * Completion rules: what "done" means for an asynchronous change, as data. A backend that answers
 * before it finishes returns a rule with the change; the rule is stored with the operation record
 * (JSON, no closure, no credential), and the backend that made it evaluates it against what it
 * reads. Who reads is separate from what the rule says: today the operation poller with the
 * caller's credential, later a watcher with the service credential.
 */
import type { CallOptions } from './call-options';

/** JSON values a rule may hold. */
export type RuleValue = string | number | boolean | null;

/** One change's completion rule. */
export interface CompletionRule {
  /** The rule's name in its backend's rule table (e.g. `serverAttach`, `volumeSettles`). */
  name: string;
  /** Fixed when the change started: ids, target size, the backend's request id … */
  params: Record<string, RuleValue>;
  /** Facts observed so far that later checks need (e.g. that the attach started). Starts empty. */
  seen: Record<string, RuleValue>;
}

/** Progress of a change the backend finishes after answering. */
export type ChangeProgress =
  | { state: 'RUNNING'; backendStatus?: string | null }
  | { state: 'SUCCEEDED'; backendStatus?: string | null }
  | { state: 'FAILED'; reason: string; backendStatus?: string | null };

/**
 * Longest an accepted change may take before its operation is TIMED_OUT, unless the backend says:
 * the tracker's default and a backend's `OPERATION_TIMEOUT_MS` default.
 */
export const DEFAULT_CHANGE_TIMEOUT_MS = 120_000;

/** A change the backend accepted but finishes later. */
export interface PendingChange {
  rule: CompletionRule;
  /** Longest the change may take. @default the tracker's default ({@link DEFAULT_CHANGE_TIMEOUT_MS}, a backend's OPERATION_TIMEOUT_MS) */
  timeoutMs?: number;
  /**
   * Set when the backend already checked the rule before answering and saw the change under way
   * (its `seen` facts are in `rule`): the operation starts RUNNING with this status, not PENDING.
   * @default none: the operation starts PENDING
   */
  started?: { backendStatus: string | null };
}

/** One evaluation of a rule: the progress and the facts to keep for the next one. */
export interface ChangeCheck {
  progress: ChangeProgress;
  seen: Record<string, RuleValue>;
}

/**
 * Backends whose changes finish after they answer. `checkChange` reads what the rule names and
 * evaluates it; it throws only for real failures (the tracker retries transient ones until the
 * deadline).
 */
export interface TrackedChanges {
  checkChange(rule: CompletionRule, o: CallOptions): Promise<ChangeCheck>;
}
