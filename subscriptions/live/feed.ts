/**
 * The feed: one watcher per watchable backend, its deltas turned into typed changes (`changesOf`,
 * one per real transition: `Transitions`) and appended to the event log in the order observed.
 * The operation tracker sees the deltas first (`observe`, when it has it), and their changes are
 * appended once the operations they concern were checked (at most `operationWaitMs` later): an
 * operation is terminal before or with the event that says it is done. It pushes demand to the
 * watchers (subscribers per backend, volumes with an operation in progress), keeps their statuses
 * for /readyz and /metrics, and appends ATTACHING/DETACHING itself when the gateway accepts an
 * attach or detach (the watcher's later sighting of the same state is then not sent again), and
 * the volume doctor's changes. */
import type { VolumeBackend } from '../../adapters/contract/backend';
import type { AttachTarget, DetachTarget } from '../../adapters/contract/call-inputs';
import { decodeGlobalId } from '../../adapters/contract/ids';
import type { Attachment, AttachmentState, Volume, VolumeRef, OperationRecord } from '../../adapters/contract/model';
import type { VolumeDelta, VolumeWatcher, WatcherState, WatcherStatus } from '../../adapters/contract/watch';
import { WatcherDirectory } from '../../domain/watchers';
import type { BackendRegistry } from '../../domain/registry';
import { changesOf } from '../events/diff';
import { viewOnly } from '../events/view-only';
import type { AppendOptions, EventLog } from '../events';
import { Transitions } from '../events/transitions';
import type { ChangeInput } from '../events/types';
import { TERMINAL } from '../operations/types';
import type { AcceptedChange, LiveMutations } from '../../domain/live-mutations';
import { AppendQueue } from './append-queue';
import { activeTraceparent } from './tracing';
import { LocalWatchers, type WatcherHost, type WatcherSource, type WatchObserver } from './watcher-source';

/** What the feed needs of the operation tracker. */
export interface FeedOperations {
  subscribe(listener: (r: OperationRecord) => void): () => void;
  /**
   * The tracker's hook onto watcher deltas (operations complete on what watchers see), when it has
   * one; resolves once the operations concerned were checked.
   */
  observe?(backend: string, deltas: readonly VolumeDelta[]): void | Promise<void>;
}

/** One backend's live status. */
export interface FeedStatus {
  backend: string;
  /** False when the backend has no watcher; `reason` says why. */
  available: boolean;
  reason: string | null;
  /** The watcher's own status; null without a watcher. */
  watcher: WatcherStatus | null;
}

/** Options of {@link Feed}. */
export interface FeedOptions {
  registry: BackendRegistry;
  /** Where the watchers it starts are registered (domain/watchers.ts). @default a directory of its own */
  watchers?: WatcherDirectory;
  log: EventLog;
  operations: FeedOperations;
  /** Subscribers that may want a backend's changes (the hub's index). */
  subscribers: (backend: string) => number;
  /** Watcher state changes and source errors. */
  onStatus?: (s: WatcherStatus, err?: unknown) => void;
  /** Changes appended (metrics: events in). */
  onAppended?: (backend: string, n: number) => void;
  /** An append failed (logged; the log is in the process, so this is a bug). */
  onError?: (err: unknown) => void;
  /** Where the watchers come from. @default {@link LocalWatchers}: one per watchable backend in this process */
  source?: WatcherSource;
  /** This replica's id, stamped on the gateway's own announcements (`ChangeInput.announcedBy`). @default 'local' */
  replica?: string;
  /** Longest wait, in ms, for the operation checks a watcher's changes started before they are appended (a slow backend must not hold every event back). @default 2000 */
  operationWaitMs?: number;
  /** Also follows the watchers this replica runs (the volume doctor). @default none */
  observer?: WatchObserver;
}

const OPERATION_WAIT_MS = 2_000;

/** Most changes appended in one call. */
const APPEND_BATCH = 200;

/**
 * How long a volume's changes are said to be caused by the mutation last tracked on it (their
 * delivery spans link to its trace): long enough for an attach, a create or an extend to finish.
 */
const CAUSE_TTL_MS = 10 * 60_000;

const refKey = (r: VolumeRef): string => `${r.backend}\0${r.namespace}\0${r.nativeId}`;

/** Watcher states in which its view is being (re)read: a new subscription waits them out. */
const SETTLING: ReadonlySet<WatcherState> = new Set(['STARTING', 'RESYNCING']);

const now = (): string => new Date().toISOString();

/** The volume's attachment the detach target names. */
function detachedOne(v: Volume, t: DetachTarget): Attachment | undefined {
  if (t.kind === 'server') return v.attachments.find((a) => a.consumer.serverId === t.serverId);
  if (t.kind === 'hostAttachment')
    return v.attachments.find((a) => a.consumerId === t.attachmentId || a.nativeId === t.attachmentId);
  return undefined;
}

/**
 * The attachment an accepted attach is making, as ATTACHING: the backend's answer, or for a server
 * target answered with none, the one its server-attachments facet says it is starting.
 */
function attaching(
  b: VolumeBackend | undefined,
  ref: VolumeRef,
  t: AttachTarget,
  answered: Attachment | null | undefined,
): Attachment | null {
  if (answered) return answered.state === 'ATTACHED' ? null : { ...answered, state: 'ATTACHING' };
  if (t.kind !== 'server') return null;
  return b?.serverAttachments?.startedAttachment(ref, t) ?? null;
}

/** Resolves when `p` settles or after `ms`, whichever is first; never rejects. */
async function within(p: Promise<void>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([p.catch(() => undefined), new Promise<void>((r) => (timer = setTimeout(r, ms)))]);
  clearTimeout(timer);
}

const withAttachment = (v: Volume, a: Attachment, state: AttachmentState): Volume => ({
  ...v,
  attachments: [...v.attachments.filter((x) => x.consumerId !== a.consumerId), { ...a, state }],
});

export class Feed implements LiveMutations {
  readonly #o: FeedOptions;
  /** The watchers this feed started, registered where the tracker and the loaders find them. */
  readonly #watchers: WatcherDirectory;
  readonly #source: WatcherSource;
  #unavailable = new Map<string, string>();
  /** Operations in progress, by id (from the tracker's changes). */
  readonly #pending = new Map<string, OperationRecord>();
  /** Per backend: one lease, so one memory the next holder takes over. */
  readonly #transitions = new Map<string, Transitions>();
  /** Per backend, the transitions memory last sent to the log (a memory-only write is skipped when unchanged). */
  readonly #kept = new Map<string, string>();
  /** Per volume, the trace of the mutation last tracked on it and until when (only with tracing on). */
  readonly #causes = new Map<string, { traceparent: string; until: number }>();
  readonly #appends: AppendQueue;
  #unsubscribe: (() => void) | null = null;
  #demandQueued = false;
  #stopped = false;
  #stopping: Promise<void> | null = null;
  /** `settled` waits, checked on every watcher state change. */
  readonly #settleWaiters = new Set<() => void>();

  constructor(o: FeedOptions) {
    this.#o = o;
    this.#watchers = o.watchers ?? new WatcherDirectory((id) => o.registry.find(id));
    this.#source = o.source ?? new LocalWatchers();
    this.#appends = new AppendQueue({
      onFailed: (backend, err) => {
        this.#o.onError?.(err);
        this.#source.appendFailed?.(backend, err);
      },
      onSettled: (backend) => this.#source.appendsSettled?.(backend),
    });
  }

  /** Starts a watcher per watchable backend; the others are recorded with the reason. */
  start(): void {
    this.#unsubscribe = this.#o.operations.subscribe((r) => {
      if (TERMINAL.has(r.state)) this.#pending.delete(r.id);
      else this.#pending.set(r.id, r);
      this.requestDemand();
    });
    const host: WatcherHost = {
      register: (backend, w) => this.#watchers.register(backend, w),
      options: (backend) => ({
        onDeltas: (d) => this.#onDeltas(backend, d),
        onStatus: (st, err) => this.#onStatus(st, err),
      }),
      announced: (changes) => {
        const backend = changes[0]?.backend;
        if (backend === undefined) return;
        this.#transitionsOf(backend).announce(changes);
        // Kept where the next holder finds it, even if no change follows before a hand-over.
        if (this.#source.keepsTransitions) this.#append(backend, []);
      },
      restore: (backend, remembered) => this.#transitionsOf(backend).restore(remembered),
      appending: (backend) => this.#appends.busy(backend),
      appendsSettledAt: (backend) => this.#appends.settledAt(backend),
      observed: (backend, deltas) => {
        try {
          void this.#o.operations.observe?.(backend, deltas);
        } catch (err) {
          this.#o.onError?.(err);
        }
      },
    };
    this.#unavailable = this.#source.start(this.#o.registry.all, host);
    this.requestDemand();
  }

  /** The volume doctor's changes of a backend, appended like a watcher's (fenced across replicas). */
  problems = (backend: string, changes: ChangeInput[]): void => this.#append(backend, changes);

  /** The running watcher of a backend. */
  watcher(backend: string): VolumeWatcher | undefined {
    return this.#watchers.watcher(backend);
  }

  /** Why a backend has no watcher; undefined when it has one. */
  unavailable(backend: string): string | undefined {
    return this.#unavailable.get(backend);
  }

  statuses(): FeedStatus[] {
    return this.#o.registry.all.map((b) => {
      const w = this.#watchers.watcher(b.id);
      return {
        backend: b.id,
        available: w !== undefined,
        reason: this.#unavailable.get(b.id) ?? null,
        watcher: w ? w.status() : null,
      };
    });
  }

  /** Pushes demand to the watchers soon (coalesced: subscriptions come and go in bursts). */
  requestDemand(): void {
    if (this.#demandQueued || this.#stopped) return;
    this.#demandQueued = true;
    setImmediate(() => {
      if (this.#demandQueued) this.#applyDemand();
    });
  }

  /**
   * Resolves once none of `backends`' watchers is reading its first view or re-reading one (after
   * an idle spell or a gap), or after `timeoutMs`, whichever is first. A new subscription waits
   * for it, so that its SUBSCRIBED marks a point from which its watchers report every change.
   * Failing watchers (DEGRADED) are not waited for.
   * @returns the backends whose watcher still had no view at all when the wait ended
   */
  async settled(backends: readonly string[], timeoutMs: number): Promise<string[]> {
    const ws = backends.flatMap((b) => this.#watchers.watcher(b) ?? []);
    // A watcher that sleeps for want of listeners wakes now, not on the next turn.
    if (this.#demandQueued && ws.some((w) => w.status().state === 'IDLE')) this.#applyDemand();
    const busy = (): boolean => ws.some((w) => SETTLING.has(w.status().state));
    if (busy()) {
      await new Promise<void>((resolve) => {
        const done = (): void => {
          clearTimeout(timer);
          this.#settleWaiters.delete(check);
          resolve();
        };
        const check = (): void => {
          if (this.#stopped || !busy()) done();
        };
        const timer = setTimeout(done, timeoutMs);
        this.#settleWaiters.add(check);
      });
    }
    return ws
      .filter((w) => {
        const { currentAt, state } = w.status();
        return currentAt === null && state !== 'IDLE';
      })
      .map((w) => w.backend);
  }

  #applyDemand(): void {
    this.#demandQueued = false;
    if (this.#stopped) return;
    const pending = new Map<string, VolumeRef[]>();
    for (const r of this.#pending.values()) {
      const t = decodeGlobalId(r.targetId, null);
      if (t.kind !== 'Volume') continue;
      pending.set(r.backend, [
        ...(pending.get(r.backend) ?? []),
        { backend: t.backend, namespace: t.scope, nativeId: t.nativeId },
      ]);
    }
    // Records name volumes, not servers: a watcher finds the servers from the volume's attachments.
    for (const [id, w] of this.#watchers.entries())
      w.setDemand({ subscribers: this.#o.subscribers(id), pendingVolumes: pending.get(id) ?? [], pendingServers: [] });
  }

  /** Watcher state changes: logged by the server, and they may end `settled` waits. */
  #onStatus(s: WatcherStatus, err?: unknown): void {
    this.#o.onStatus?.(s, err);
    for (const check of [...this.#settleWaiters]) check();
  }

  accepted(c: AcceptedChange): void {
    const w = this.#watchers.watcher(c.volume.backend);
    if (!w || !c.pending) return;
    const view = w.volume(c.volume);
    let after: Volume | null = null;
    if (view && c.kind === 'ATTACH') {
      const a = attaching(this.#o.registry.find(c.volume.backend), c.volume, c.target as AttachTarget, c.attachment);
      if (a) after = withAttachment(view, a, 'ATTACHING');
    } else if (view && c.kind === 'DETACH') {
      const a = detachedOne(view, c.target as DetachTarget);
      if (a && a.state !== 'DETACHING') after = withAttachment(view, a, 'DETACHING');
    }
    if (view && after) {
      const changes = changesOf({ before: view, after, observedAt: now() }).filter(
        (x) => x.type === 'ATTACHING' || x.type === 'DETACHING',
      );
      const announcedBy = this.#o.replica ?? 'local';
      const announced = this.#transitionsOf(c.volume.backend).announce(changes.map((x) => ({ ...x, announcedBy })));
      this.#append(c.volume.backend, announced);
    }
    const server = c.target.kind === 'server' ? [c.target.serverId] : [];
    w.nudge([c.volume], server);
  }

  changing(volume: VolumeRef): void {
    if (!this.#watchers.watcher(volume.backend)) return;
    // Called inside the mutation: its span is the active one (none without tracing).
    const cause = activeTraceparent();
    if (cause) this.#causes.set(refKey(volume), { traceparent: cause, until: Date.now() + CAUSE_TTL_MS });
  }

  /** Stops every watcher (once: later calls wait for the first). */
  stop(): Promise<void> {
    this.#stopping ??= this.#stop();
    return this.#stopping;
  }

  async #stop(): Promise<void> {
    this.#stopped = true;
    for (const check of [...this.#settleWaiters]) check();
    this.#unsubscribe?.();
    await this.#source.stop();
    await this.#appends.drained();
  }

  #onDeltas(backend: string, deltas: VolumeDelta[]): void {
    try {
      this.#o.observer?.deltas(backend, deltas);
    } catch (err) {
      this.#o.onError?.(err);
    }
    let checked: void | Promise<void> = undefined;
    try {
      checked = this.#o.operations.observe?.(backend, deltas);
    } catch (err) {
      this.#o.onError?.(err);
    }
    const changes = this.#transitionsOf(backend).observe(deltas);
    this.#append(backend, this.#source.carriesViews ? [...changes, ...viewOnly(deltas, changes)] : changes, checked);
  }

  #transitionsOf(backend: string): Transitions {
    let t = this.#transitions.get(backend);
    if (!t) this.#transitions.set(backend, (t = new Transitions()));
    return t;
  }

  /** Marks the changes of volumes a mutation is changing with its trace; forgets expired causes. */
  #stampCauses(changes: ChangeInput[]): void {
    const now = Date.now();
    for (const [k, c] of this.#causes) if (c.until <= now) this.#causes.delete(k);
    for (const c of changes) {
      const cause = this.#causes.get(refKey(c.volume.ref));
      if (cause) c.cause ??= cause.traceparent;
    }
  }

  /**
   * Appends in order: one queue for every source, so the log's order is the order observed. With
   * `after`, the changes wait for it (bounded by `operationWaitMs`): the operation checks they started.
   */
  #append(backend: string, changes: ChangeInput[], after?: void | Promise<void>): void {
    const keeps = this.#source.keepsTransitions === true;
    if (changes.length === 0 && !keeps) return;
    if (this.#causes.size > 0) this.#stampCauses(changes);
    // Taken now: the memory these changes leave, not what later deltas add before the write.
    const remembered = keeps ? JSON.stringify(this.#transitionsOf(backend).remembered()) : undefined;
    if (changes.length === 0 && remembered === this.#kept.get(backend)) return;
    if (remembered !== undefined) this.#kept.set(backend, remembered);
    // The fence of the lease these changes were seen under, taken now: appended later under
    // another lease (or none), they would double what the next holder's take-over sends.
    let options: AppendOptions | undefined;
    try {
      options = this.#source.appendOptions(backend, remembered);
    } catch (err) {
      this.#o.onError?.(err);
      return;
    }
    this.#appends.run(backend, async () => {
      if (after) await within(after, this.#o.operationWaitMs ?? OPERATION_WAIT_MS);
      if (changes.length === 0) {
        if (options?.keep) await this.#o.log.appendMany([], options);
        return;
      }
      // Batches, so a hand-over's comparison of 10,000 volumes does not hold Redis for one long script.
      for (let i = 0; i < changes.length; i += APPEND_BATCH)
        await this.#o.log.appendMany(changes.slice(i, i + APPEND_BATCH), options);
      this.#o.onAppended?.(backend, changes.length);
    });
  }
}
