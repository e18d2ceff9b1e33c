/**
 * The operation tracker: records an asynchronous mutation as an Operation and polls the backend
 * until the change reaches a terminal state or its deadline. The record holds the change's
 * completion rule (data, not a closure); each poll hands it to the backend's `checkChange`,
 * found by backend id, and saves the facts the rule keeps (`seen`) with the record. It lives
 * beside the HTTP server, so an operation survives the mutation's request; listeners (metrics
 * now, subscriptions later) see every state change.
 *
 * The caller's credential is needed to poll on the caller's behalf; it stays in this process's
 * memory for the operation's lifetime only and is never stored in a record.
 */
import { createHash, randomUUID } from 'node:crypto';
import type { CallerCredential, PendingChange } from '../../adapters/backend';
import type { ChangeProgress, CompletionRule, TrackedChanges } from '../../adapters/completion';
import { GatewayError } from '../../adapters/errors';
import { MemoryOperationStore, type OperationStore } from './store';
import { TERMINAL, type OperationKind, type OperationRecord, type OperationState } from './types';

export interface OperationTrackerOptions {
  /**
   * The backend that evaluates a change's rule, by backend id; undefined when no such backend
   * (or one that tracks no changes) is configured, which fails the operation.
   */
  changes: (backendId: string) => TrackedChanges | undefined;
  /** @default a MemoryOperationStore */
  store?: OperationStore;
  /** First check this long after the start; later checks back off by 1.5× up to `maxPollMs`. @default 250 */
  pollMs?: number;
  /** @default 2000 */
  maxPollMs?: number;
  /** Deadline of an operation whose change names none. @default 120000 */
  defaultTimeoutMs?: number;
  /** Called after every stored change (state, backend status or seen facts; `previous` null for a new one). Must not throw. */
  onChange?: (r: OperationRecord, previous: OperationState | null) => void;
  /** Called when a check fails (logged by the server). */
  onCheckError?: (r: OperationRecord, err: unknown) => void;
}

export interface StartOperation {
  kind: OperationKind;
  backend: string;
  scope: string;
  targetId: string;
  credential: CallerCredential;
  requestId?: string;
  /** Null when the backend finished synchronously: the operation starts SUCCEEDED. */
  pending: PendingChange | null;
}

/** Who may read an operation without proving access to its target. */
export function ownerKey(backend: string, credential: CallerCredential): string {
  return createHash('sha256').update(`${backend}\0${credential.token ?? ''}`).digest('base64url');
}

/** The record after one check's progress (and the facts its rule keeps). */
function advance(r: OperationRecord, p: ChangeProgress, rule: CompletionRule): Partial<OperationRecord> {
  const backendStatus = p.backendStatus ?? r.backendStatus;
  return p.state === 'FAILED' ? { state: 'FAILED', failureReason: p.reason, backendStatus, rule } : { state: p.state, backendStatus, rule };
}

const changed = (r: OperationRecord, next: Partial<OperationRecord>): boolean =>
  next.state !== r.state || next.backendStatus !== r.backendStatus || Boolean(next.failureReason) || JSON.stringify(next.rule?.seen ?? null) !== JSON.stringify(r.rule?.seen ?? null);

type Settings = Required<Omit<OperationTrackerOptions, 'store' | 'onChange' | 'onCheckError'>> & Pick<OperationTrackerOptions, 'onChange' | 'onCheckError'>;

export class OperationTracker {
  readonly store: OperationStore;
  readonly #o: Settings;
  readonly #running = new Map<string, { timer: NodeJS.Timeout | null; abort: AbortController }>();
  readonly #listeners = new Set<(r: OperationRecord, previous: OperationState | null) => void>();
  #closed = false;

  constructor(o: OperationTrackerOptions) {
    this.store = o.store ?? new MemoryOperationStore();
    this.#o = { changes: o.changes, pollMs: o.pollMs ?? 250, maxPollMs: o.maxPollMs ?? 2000, defaultTimeoutMs: o.defaultTimeoutMs ?? 120_000, onChange: o.onChange, onCheckError: o.onCheckError };
  }

  /** Operations still being polled by this process. */
  get active(): number {
    return this.#running.size;
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
      state: s.pending ? 'PENDING' : 'SUCCEEDED',
      backendStatus: null,
      failureReason: null,
      createdAt: now,
      updatedAt: now,
      deadline: now + (s.pending?.timeoutMs ?? this.#o.defaultTimeoutMs),
      owner: ownerKey(s.backend, s.credential),
      ...(s.pending ? { rule: s.pending.rule } : {}),
    };
    await this.#save(record, null);
    if (record.rule && !this.#closed) this.#poll(record, s.credential, s.requestId);
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

  #poll(initial: OperationRecord, credential: CallerCredential, requestId: string | undefined): void {
    const abort = new AbortController();
    const slot: { timer: NodeJS.Timeout | null; abort: AbortController } = { timer: null, abort };
    this.#running.set(initial.id, slot);
    let record = initial;
    let delay = this.#o.pollMs;
    const finish = (): void => void this.#running.delete(record.id);
    const step = async (): Promise<void> => {
      slot.timer = null;
      if (abort.signal.aborted) return;
      const next = await this.#check(record, credential, requestId, abort.signal);
      if (abort.signal.aborted) return;
      if (next && changed(record, next)) {
        const previous = record.state;
        record = { ...record, ...next, updatedAt: Date.now() };
        await this.#save(record, previous);
      }
      if (TERMINAL.has(record.state)) return finish();
      if (Date.now() >= record.deadline) {
        const previous = record.state;
        const seconds = Math.round((record.deadline - record.createdAt) / 1000);
        record = { ...record, state: 'TIMED_OUT', failureReason: `not finished after ${seconds} s; last backend status: ${record.backendStatus ?? 'unknown'}`, updatedAt: Date.now() };
        await this.#save(record, previous);
        return finish();
      }
      delay = Math.min(Math.round(delay * 1.5), this.#o.maxPollMs);
      slot.timer = setTimeout(() => void step(), Math.max(0, Math.min(delay, record.deadline - Date.now())));
    };
    slot.timer = setTimeout(() => void step(), this.#o.pollMs);
  }

  /** One check of the record's rule: the record's next fields, or null to leave it as it is (retry). */
  async #check(record: OperationRecord, credential: CallerCredential, requestId: string | undefined, signal: AbortSignal): Promise<Partial<OperationRecord> | null> {
    const rule = record.rule!;
    const backend = this.#o.changes(record.backend);
    if (!backend) return { state: 'FAILED', failureReason: `backend "${record.backend}" is not configured to check this change any more` };
    try {
      const c = await backend.checkChange(rule, { credential, requestId, signal });
      return advance(record, c.progress, { ...rule, seen: c.seen });
    } catch (err) {
      if (signal.aborted) return null;
      this.#o.onCheckError?.(record, err);
      // Transient trouble (backend down, timeout) is retried until the deadline; anything else ends it.
      if (err instanceof GatewayError && err.retryable) return null;
      return { state: 'FAILED', failureReason: err instanceof GatewayError ? err.message : 'the backend could not be checked' };
    }
  }

  async #save(r: OperationRecord, previous: OperationState | null): Promise<void> {
    await this.store.put(r);
    this.#o.onChange?.(r, previous);
    for (const l of this.#listeners) l(r, previous);
  }
}
