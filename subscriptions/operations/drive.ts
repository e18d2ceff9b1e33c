/** One operation being driven by the tracker (./tracker.ts), and the pure steps of a check. */
import { createHash } from 'node:crypto';
import type { CallerCredential } from '../../adapters/contract/call-options';
import type { ChangeProgress, CompletionRule } from '../../adapters/contract/completion';
import type { OperationTrackerOptions } from './tracker-options';
import type { OperationRecord } from '../../adapters/contract/model';

/** One operation being driven: where its credential comes from and when it is checked next. */
export interface Drive {
  record: OperationRecord;
  /** The shared copy's version this drive last wrote (0 without a shared store). */
  version: number;
  credential: () => Promise<CallerCredential | null>;
  /** The next delay after a check. */
  nextDelay: () => number;
  requestId: string | undefined;
  /** Checked with the service credential when its watcher reports a change of the target. */
  watched: boolean;
  timer: NodeJS.Timeout | null;
  abort: AbortController;
  /** A check is running; `again` asks for another right after it, `waiters` wait for that one. */
  busy: boolean;
  again: boolean;
  waiters: Array<() => void>;
}

/** Who may read an operation without proving access to its target. */
export function ownerKey(backend: string, credential: CallerCredential): string {
  return createHash('sha256')
    .update(`${backend}\0${credential.token ?? ''}`)
    .digest('base64url');
}

/** The record after one check's progress (and the facts its rule keeps). */
export function advance(r: OperationRecord, p: ChangeProgress, rule: CompletionRule): Partial<OperationRecord> {
  const backendStatus = p.backendStatus ?? r.backendStatus;
  return p.state === 'FAILED'
    ? { state: 'FAILED', failureReason: p.reason, backendStatus, rule }
    : { state: p.state, backendStatus, rule };
}

export const changed = (r: OperationRecord, next: Partial<OperationRecord>): boolean =>
  next.state !== r.state ||
  next.backendStatus !== r.backendStatus ||
  Boolean(next.failureReason) ||
  JSON.stringify(next.rule?.seen ?? null) !== JSON.stringify(r.rule?.seen ?? null);

export type Settings = Required<
  Omit<OperationTrackerOptions, 'store' | 'onChange' | 'onCheckError' | 'onRelease' | 'watchers' | 'replication'>
> &
  Pick<OperationTrackerOptions, 'onChange' | 'onCheckError' | 'onRelease' | 'watchers' | 'replication'>;

/** A time after `at` (a record's next `updatedAt`): strictly later, whatever the clocks of the replicas that wrote it. */
export const stamp = (at: number): number => Math.max(Date.now(), at + 1);
