/**
 * What every OpenStack module of this backend shares: its id, the HTTP client and the deadline of
 * its changes, plus the small helpers they all use (404 as absence, pending changes).
 */
import type { CompletionRule, PendingChange } from '../contract/completion';
import { isStatus } from '../contract/errors';
import type { OpenStackClient } from './client';

export interface OpenStackContext {
  /** The backend's configured id (in refs, errors and metrics). */
  readonly backend: string;
  readonly client: OpenStackClient;
  /** Longest an asynchronous change may take before its operation is TIMED_OUT. */
  readonly operationTimeoutMs: number;
}

/** The pending change a rule describes, with this backend's deadline. */
export const pending = (ctx: OpenStackContext, rule: CompletionRule): PendingChange => ({
  rule,
  timeoutMs: ctx.operationTimeoutMs,
});

/** The value of `call`, or null when the service answers 404 (unknown, or another project's). */
export async function orNull<T>(call: Promise<T>): Promise<T | null> {
  try {
    return await call;
  } catch (err) {
    if (isStatus(err, 404)) return null;
    throw err;
  }
}
