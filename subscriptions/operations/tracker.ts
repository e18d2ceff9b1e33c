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
import { randomUUID } from 'node:crypto';
import type { CallerCredential } from '../../adapters/contract/call-options';
import { DEFAULT_CHANGE_TIMEOUT_MS } from '../../adapters/contract/completion';
import { GatewayError } from '../../adapters/contract/errors';
import type { VolumeDelta } from '../../adapters/contract/watch';
import { volumeGlobalId } from '../events/diff';
import { advance, changed, ownerKey, stamp, type Drive, type Settings } from './drive';
import { HeardRecords } from './heard';
import { InProcessOperationStore, isShared, type FencedRecord, type OperationStore } from './store';
import type { OperationTrackerOptions, StartOperation } from './tracker-options';
import { TERMINAL } from './types';
import type { OperationRecord, OperationState } from '../../adapters/contract/model';

export class OperationTracker {
  readonly store: OperationStore;
  readonly #o: Settings;
  readonly #running = new Map<string, Drive>();
  readonly #listeners = new Set<(r: OperationRecord, previous: OperationState | null) => void>();
  /** Records read or heard of here (the change stream's dedup, and what a resync re-reads). */
  readonly #heard = new HeardRecords();
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
      onRelease: o.onRelease,
      replication: o.replication,
    };
    o.replication?.start(this);
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
    const version = (await this.#save(record, null, 0)) ?? 0;
    if (record.rule && !this.#closed) this.#drive(record, version, s.credential, s.requestId);
    return record;
  }

  /** The records of one target (global id). */
  forTarget(targetId: string): Promise<OperationRecord[]> {
    return this.store.forTarget(targetId);
  }

  async get(id: string): Promise<OperationRecord | null> {
    const r = await this.store.get(id);
    if (r) this.#heard.note(r, 0);
    return r;
  }

  /** Whether this process drives the operation. */
  drives(id: string): boolean {
    return this.#running.has(id);
  }

  /**
   * A change another replica stored (the shared change stream, in order): listeners hear of it.
   * A newer version of an operation this process drives means another replica took it over (this
   * one was paused or cut off): this process stops driving it.
   */
  receive(r: OperationRecord, version: number): void {
    const drive = this.#running.get(r.id);
    if (drive && version > drive.version) this.#release(drive);
    if (this.#heard.note(r, version)) this.#notify(r, null);
  }

  /** Ids of running records listeners may wait on (re-read after the change stream was away). */
  interest(): string[] {
    return this.#heard.running();
  }

  /**
   * Takes over a running operation whose driving replica is gone, on a backend this replica
   * watches: claims it (a fenced write naming this replica) and drives it with the service
   * credential from now on, checking at once. @returns false when another replica claimed it first,
   * or this one already drives it
   */
  async adopt(f: FencedRecord): Promise<boolean> {
    if (this.#closed || this.#running.has(f.record.id) || !f.record.rule) return false;
    if (!this.#o.watchers?.serviceCredential(f.record.backend, f.record.scope)) return false;
    const record = { ...f.record, updatedAt: stamp(f.record.updatedAt) };
    const version = await this.#save(record, null, f.version, false);
    if (version === null || this.#closed || this.#running.has(record.id)) return false;
    const drive = this.#drive(record, version, null, undefined);
    if (!drive) return false;
    void this.#checkNow(drive);
    return true;
  }

  /**
   * Ends a running operation whose driving replica is gone, past its deadline: `TIMED_OUT` with
   * `reason`, unless it changed since `f` was read. @returns whether this call ended it
   */
  async timeOut(f: FencedRecord, reason: string): Promise<boolean> {
    const r: OperationRecord = {
      ...f.record,
      state: 'TIMED_OUT',
      failureReason: reason,
      updatedAt: stamp(f.record.updatedAt),
    };
    return (await this.#save(r, null, f.version)) !== null;
  }

  /**
   * After Redis was away: writes back what did not reach it, and the records this process drives
   * that Redis lost (restarted empty), so other replicas read them and can take them over again.
   */
  async writeBack(): Promise<void> {
    if (!isShared(this.store)) return;
    await this.store.flush();
    for (const drive of [...this.#running.values()]) {
      if ((await this.store.read(drive.record.id)) !== null || drive.abort.signal.aborted) continue;
      const r = { ...drive.record, updatedAt: stamp(drive.record.updatedAt) };
      const version = await this.#save(r, drive.record.state, drive.version, false);
      if (version === null) this.#release(drive);
      else Object.assign(drive, { record: r, version });
    }
  }

  /** Stops every poller (shutdown). Records keep their last state. */
  async close(): Promise<void> {
    this.#closed = true;
    for (const { timer, abort } of this.#running.values()) {
      if (timer) clearTimeout(timer);
      abort.abort();
    }
    this.#running.clear();
    await this.#o.replication?.close();
  }

  /** Stops driving: another replica took the operation over or finished it (the fence said so). */
  #release(drive: Drive): void {
    if (drive.timer) clearTimeout(drive.timer);
    drive.abort.abort();
    if (this.#running.get(drive.record.id) !== drive) return;
    this.#running.delete(drive.record.id);
    if (!this.#closed) this.#o.onRelease?.(drive.record);
  }

  /**
   * Starts driving: watched when a current watcher covers the scope, else polled with `caller`'s
   * credential; undefined when neither is possible (a takeover without a current watcher).
   */
  #drive(
    record: OperationRecord,
    version: number,
    caller: CallerCredential | null,
    requestId: string | undefined,
  ): Drive | undefined {
    const service = this.#o.watchers?.serviceCredential(record.backend, record.scope);
    if (!service && !caller) return undefined;
    let delay = this.#o.pollMs;
    const base = { record, version, timer: null, abort: new AbortController(), busy: false, again: false, waiters: [] };
    const drive: Drive = service
      ? // Nothing of the caller's is kept: not its credential, not its request id.
        { ...base, credential: service, nextDelay: () => this.#o.watchedCheckMs, requestId: undefined, watched: true }
      : {
          ...base,
          credential: async () => caller,
          nextDelay: () => (delay = Math.min(Math.round(delay * 1.5), this.#o.maxPollMs)),
          requestId,
          watched: false,
        };
    this.#running.set(record.id, drive);
    this.#schedule(drive, service ? this.#o.watchedCheckMs : this.#o.pollMs);
    return drive;
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
      record = { ...record, ...next, updatedAt: stamp(record.updatedAt) };
      if (!(await this.#commit(drive, record))) return;
    }
    if (TERMINAL.has(record.state)) return void this.#running.delete(record.id);
    if (Date.now() >= record.deadline) {
      const seconds = Math.round((record.deadline - record.createdAt) / 1000);
      await this.#commit(drive, {
        ...record,
        state: 'TIMED_OUT',
        failureReason: `not finished after ${seconds} s; last backend status: ${record.backendStatus ?? 'unknown'}`,
        updatedAt: stamp(record.updatedAt),
      });
      return void this.#running.delete(record.id);
    }
    this.#schedule(drive, drive.nextDelay());
  }

  /**
   * Stores a drive's next record, fenced by the version it last wrote. Refused (another replica
   * took the operation over, or finished it), the drive stops: @returns false
   */
  async #commit(drive: Drive, record: OperationRecord): Promise<boolean> {
    const version = await this.#save(record, drive.record.state, drive.version);
    if (version === null || drive.abort.signal.aborted) {
      this.#release(drive);
      return false;
    }
    drive.record = record;
    drive.version = version;
    return true;
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

  /**
   * Stores a change (fenced at `expected` in a shared store) and tells the listeners.
   * @returns the stored version (0 without a shared store), or null when the fence refused it
   */
  async #save(
    r: OperationRecord,
    previous: OperationState | null,
    expected: number,
    notify = true,
  ): Promise<number | null> {
    let version = 0;
    if (isShared(this.store)) {
      const w = await this.store.write(r, expected, TERMINAL.has(r.state) ? null : this.store.replica);
      if (!w.written) return null;
      version = w.version;
      this.#heard.note(r, version);
    } else await this.store.put(r);
    this.#o.onChange?.(r, previous);
    if (notify) this.#notify(r, previous);
    return version;
  }

  #notify(r: OperationRecord, previous: OperationState | null): void {
    for (const l of this.#listeners) l(r, previous);
  }
}
