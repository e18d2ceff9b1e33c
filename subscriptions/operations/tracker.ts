/**
 * The operation tracker: records an asynchronous mutation as an Operation and drives it to a
 * terminal state or its deadline. The record holds the change's completion rule (data, not a
 * closure); each check hands it to the backend's `checkChange`, found by backend id, and saves the
 * facts the rule keeps (`seen`) with the record. It lives beside the HTTP server, so an operation
 * survives the mutation's request; listeners (metrics, `operationUpdated`) see every state change.
 *
 * Two ways to drive an operation:
 * - watched: when a watcher keeps the operation's backend and scope current (`watchers` option),
 *   the rule is checked with the gateway's service credential each time the watcher reports a
 *   change of the target ({@link OperationTracker.observe}), plus a slow safety check. No caller
 *   credential is kept, and checks follow the rate of change, not the number of operations.
 * - polled: otherwise the rule is checked with the caller's credential (kept in this process's
 *   memory for the operation's lifetime only, never in a record), 250 ms backing off to 2 s, and
 *   also when a watcher reports a change of the target.
 */
import { createHash, randomUUID } from 'node:crypto';
import type { CallerCredential } from '../../adapters/contract/call-options';
import type { PendingChange } from '../../adapters/contract/completion';
import {
  DEFAULT_CHANGE_TIMEOUT_MS,
  type ChangeProgress,
  type CompletionRule,
  type TrackedChanges,
} from '../../adapters/contract/completion';
import { GatewayError } from '../../adapters/contract/errors';
import type { VolumeDelta } from '../../adapters/contract/watch';
import { volumeGlobalId } from '../events/diff';
import { InProcessOperationStore, type OperationStore } from './store';
import { TERMINAL } from './types';
import type { OperationKind, OperationRecord, OperationState } from '../../adapters/contract/model';

export interface OperationTrackerOptions {
  /**
   * The backend that evaluates a change's rule, by backend id; undefined when no such backend
   * (or one that tracks no changes) is configured, which fails the operation.
   */
  changes: (backendId: string) => TrackedChanges | undefined;
  /** @default a InProcessOperationStore */
  store?: OperationStore;
  /** First check this long after the start; later checks back off by 1.5× up to `maxPollMs`. @default 250 */
  pollMs?: number;
  /** @default 2000 */
  maxPollMs?: number;
  /** Deadline of an operation whose change names none. @default {@link DEFAULT_CHANGE_TIMEOUT_MS} (120000) */
  defaultTimeoutMs?: number;
  /**
   * Which operations are watched (the watcher directory, domain/watchers.ts): asked as an operation
   * starts. @default none: every operation is polled with the caller's credential
   */
  watchers?: WatchedScopes;
  /** Watched operations: the safety check's interval when the watcher reports nothing. @default 5000 */
  watchedCheckMs?: number;
  /** Called after every stored change (state, backend status or seen facts; `previous` null for a new one). Must not throw. */
  onChange?: (r: OperationRecord, previous: OperationState | null) => void;
  /** Called when a check fails (logged by the server). */
  onCheckError?: (r: OperationRecord, err: unknown) => void;
}

/** The gateway's own credential for a backend; null when it has none (the check then fails over to the deadline). */
export type ServiceCredential = () => Promise<CallerCredential | null>;

/** What the tracker asks about watchers. */
export interface WatchedScopes {
  /**
   * The service credential to check a change of `backend` in `scope` with, while a watcher keeps
   * that scope current and reports its changes to {@link OperationTracker.observe}; undefined: poll
   * with the caller's credential.
   */
  serviceCredential(backend: string, scope: string): ServiceCredential | undefined;
}

export interface StartOperation {
  kind: OperationKind;
  backend: string;
  scope: string;
  targetId: string;
  credential: CallerCredential;
  requestId?: string;
  /**
   * Null when the backend finished synchronously: the operation starts SUCCEEDED. Else it starts
   * PENDING, or RUNNING when the backend saw the change `started`.
   */
  pending: PendingChange | null;
}

/** One operation being driven: where its credential comes from and when it is checked next. */
interface Drive {
  record: OperationRecord;
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
function advance(r: OperationRecord, p: ChangeProgress, rule: CompletionRule): Partial<OperationRecord> {
  const backendStatus = p.backendStatus ?? r.backendStatus;
  return p.state === 'FAILED'
    ? { state: 'FAILED', failureReason: p.reason, backendStatus, rule }
    : { state: p.state, backendStatus, rule };
}

const changed = (r: OperationRecord, next: Partial<OperationRecord>): boolean =>
  next.state !== r.state ||
  next.backendStatus !== r.backendStatus ||
  Boolean(next.failureReason) ||
  JSON.stringify(next.rule?.seen ?? null) !== JSON.stringify(r.rule?.seen ?? null);

type Settings = Required<Omit<OperationTrackerOptions, 'store' | 'onChange' | 'onCheckError' | 'watchers'>> &
  Pick<OperationTrackerOptions, 'onChange' | 'onCheckError' | 'watchers'>;

export class OperationTracker {
  readonly store: OperationStore;
  readonly #o: Settings;
  readonly #running = new Map<string, Drive>();
  readonly #listeners = new Set<(r: OperationRecord, previous: OperationState | null) => void>();
  #closed = false;

  constructor(o: OperationTrackerOptions) {
    this.store = o.store ?? new InProcessOperationStore();
    this.#o = {
      changes: o.changes,
      pollMs: o.pollMs ?? 250,
      maxPollMs: o.maxPollMs ?? 2000,
      defaultTimeoutMs: o.defaultTimeoutMs ?? DEFAULT_CHANGE_TIMEOUT_MS,
      watchedCheckMs: o.watchedCheckMs ?? 5000,
      watchers: o.watchers,
      onChange: o.onChange,
      onCheckError: o.onCheckError,
    };
  }

  /** Operations still being driven by this process. */
  get active(): number {
    return this.#running.size;
  }

  /** Global ids of the targets of this backend's operations in progress (a watcher's demand). */
  pendingTargets(backend: string): string[] {
    return [...this.#running.values()].filter((d) => d.record.backend === backend).map((d) => d.record.targetId);
  }

  /**
   * A watcher's changes of one backend: every operation whose target changed is checked now (once,
   * however many changes arrived together): a watched one with the service credential, a polled one
   * (started while no current watcher covered its scope) with its caller's, ahead of its next poll.
   * @returns resolves once those checks are done and their records saved, so that the events of
   * these changes can go out after the operation's state that agrees with them (the feed waits
   * for it, bounded); undefined when no operation was concerned
   */
  observe(backend: string, deltas: readonly VolumeDelta[]): Promise<void> | undefined {
    const changed = new Set<string>();
    for (const d of deltas) {
      const v = d.after ?? d.before;
      if (v) changed.add(volumeGlobalId(v));
    }
    const checks: Array<Promise<void>> = [];
    for (const drive of this.#running.values()) {
      if (drive.record.backend === backend && changed.has(drive.record.targetId)) checks.push(this.#checkNow(drive));
    }
    return checks.length === 0 ? undefined : Promise.all(checks).then(() => undefined);
  }

  /** Listens to state changes; returns the unsubscribe function. */
  subscribe(listener: (r: OperationRecord, previous: OperationState | null) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  async start(s: StartOperation): Promise<OperationRecord> {
    const now = Date.now();
    const record: OperationRecord = {
      __typename: 'VolumeOperation',
      id: randomUUID(),
      kind: s.kind,
      backend: s.backend,
      scope: s.scope,
      targetId: s.targetId,
      state: s.pending ? (s.pending.started ? 'RUNNING' : 'PENDING') : 'SUCCEEDED',
      backendStatus: s.pending?.started?.backendStatus ?? null,
      failureReason: null,
      createdAt: now,
      updatedAt: now,
      deadline: now + (s.pending?.timeoutMs ?? this.#o.defaultTimeoutMs),
      owner: ownerKey(s.backend, s.credential),
      ...(s.pending ? { rule: s.pending.rule } : {}),
    };
    await this.#save(record, null);
    if (record.rule && !this.#closed) this.#drive(record, s.credential, s.requestId);
    return record;
  }

  /** The records of one target (global id). */
  forTarget(targetId: string): Promise<OperationRecord[]> {
    return this.store.forTarget(targetId);
  }

  get(id: string): Promise<OperationRecord | null> {
    return this.store.get(id);
  }

  /** Stops every poller (shutdown). Records keep their last state. */
  async close(): Promise<void> {
    this.#closed = true;
    for (const { timer, abort } of this.#running.values()) {
      if (timer) clearTimeout(timer);
      abort.abort();
    }
    this.#running.clear();
  }

  #drive(record: OperationRecord, caller: CallerCredential, requestId: string | undefined): void {
    const service = this.#o.watchers?.serviceCredential(record.backend, record.scope);
    let delay = this.#o.pollMs;
    const drive: Drive = service
      ? // Nothing of the caller's is kept: not its credential, not its request id.
        {
          record,
          credential: service,
          nextDelay: () => this.#o.watchedCheckMs,
          requestId: undefined,
          watched: true,
          timer: null,
          abort: new AbortController(),
          busy: false,
          again: false,
          waiters: [],
        }
      : {
          record,
          credential: async () => caller,
          nextDelay: () => (delay = Math.min(Math.round(delay * 1.5), this.#o.maxPollMs)),
          requestId,
          watched: false,
          timer: null,
          abort: new AbortController(),
          busy: false,
          again: false,
          waiters: [],
        };
    this.#running.set(record.id, drive);
    this.#schedule(drive, service ? this.#o.watchedCheckMs : this.#o.pollMs);
  }

  #schedule(drive: Drive, delay: number): void {
    if (drive.timer) clearTimeout(drive.timer);
    drive.timer = setTimeout(
      () => void this.#checkNow(drive),
      Math.max(0, Math.min(delay, drive.record.deadline - Date.now())),
    );
  }

  /**
   * Checks now, or right after the check that is running (a check that started before the news
   * may have read the backend before it changed). Resolves once that check is done.
   */
  #checkNow(drive: Drive): Promise<void> {
    if (drive.abort.signal.aborted) return Promise.resolve();
    if (drive.busy) {
      drive.again = true;
      return new Promise((resolve) => drive.waiters.push(resolve));
    }
    if (drive.timer) clearTimeout(drive.timer);
    drive.timer = null;
    drive.busy = true;
    return this.#step(drive)
      .catch((err: unknown) => this.#o.onCheckError?.(drive.record, err))
      .finally(() => {
        drive.busy = false;
        const waiters = drive.waiters.splice(0);
        const again = drive.again && this.#running.has(drive.record.id);
        drive.again = false;
        void (again ? this.#checkNow(drive) : Promise.resolve()).finally(() => waiters.forEach((w) => w()));
      });
  }

  async #step(drive: Drive): Promise<void> {
    const { abort } = drive;
    const credential = await drive.credential().catch(() => null);
    if (abort.signal.aborted) return;
    const next = credential ? await this.#check(drive.record, credential, drive.requestId, abort.signal) : null;
    if (abort.signal.aborted) return;
    let record = drive.record;
    if (next && changed(record, next)) {
      const previous = record.state;
      record = drive.record = { ...record, ...next, updatedAt: Date.now() };
      await this.#save(record, previous);
    }
    if (TERMINAL.has(record.state)) return void this.#running.delete(record.id);
    if (Date.now() >= record.deadline) {
      const previous = record.state;
      const seconds = Math.round((record.deadline - record.createdAt) / 1000);
      drive.record = {
        ...record,
        state: 'TIMED_OUT',
        failureReason: `not finished after ${seconds} s; last backend status: ${record.backendStatus ?? 'unknown'}`,
        updatedAt: Date.now(),
      };
      await this.#save(drive.record, previous);
      return void this.#running.delete(record.id);
    }
    this.#schedule(drive, drive.nextDelay());
  }

  /** One check of the record's rule: the record's next fields, or null to leave it as it is (retry). */
  async #check(
    record: OperationRecord,
    credential: CallerCredential,
    requestId: string | undefined,
    signal: AbortSignal,
  ): Promise<Partial<OperationRecord> | null> {
    const rule = record.rule!;
    const backend = this.#o.changes(record.backend);
    if (!backend)
      return {
        state: 'FAILED',
        failureReason: `backend "${record.backend}" is not configured to check this change any more`,
      };
    try {
      const c = await backend.checkChange(rule, { credential, requestId, signal });
      return advance(record, c.progress, { ...rule, seen: c.seen });
    } catch (err) {
      if (signal.aborted) return null;
      this.#o.onCheckError?.(record, err);
      // Transient trouble (backend down, timeout) is retried until the deadline; anything else ends it.
      if (err instanceof GatewayError && err.retryable) return null;
      return {
        state: 'FAILED',
        failureReason: err instanceof GatewayError ? err.message : 'the backend could not be checked',
      };
    }
  }

  async #save(r: OperationRecord, previous: OperationState | null): Promise<void> {
    await this.store.put(r);
    this.#o.onChange?.(r, previous);
    for (const l of this.#listeners) l(r, previous);
  }
}
