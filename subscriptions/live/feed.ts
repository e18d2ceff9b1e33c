/**
 * The feed: one watcher per watchable backend, its deltas turned into typed changes (`changesOf`)
 * and appended to the event log in the order observed; the operation tracker sees the deltas
 * first (`observe`, when it has it). It pushes demand to the watchers (subscribers per backend,
 * volumes with an operation in progress), keeps their statuses for /readyz and /metrics, and
 * appends ATTACHING/DETACHING itself when the gateway accepts an attach or detach.
 */
import type { AttachTarget, DetachTarget } from '../../adapters/backend';
import { decodeGlobalId } from '../../adapters/ids';
import type { Attachment, AttachmentState, Volume, VolumeRef } from '../../adapters/model';
import { isWatchable, type VolumeDelta, type VolumeWatcher, type WatcherState, type WatcherStatus } from '../../adapters/watch';
import type { BackendRegistry } from '../../server/registry';
import { changesOf } from '../events/diff';
import type { EventLog } from '../events';
import type { OperationRecord } from '../operations';
import { TERMINAL } from '../operations/types';
import type { AcceptedChange, LiveMutations } from './types';

/** What the feed needs of the operation tracker. */
export interface FeedOperations {
  subscribe(listener: (r: OperationRecord) => void): () => void;
  /** The tracker's hook onto watcher deltas (operations complete on what watchers see), when it has one. */
  observe?(backend: string, deltas: readonly VolumeDelta[]): void;
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
  log: EventLog;
  operations: FeedOperations;
  /** Subscribers that may want a backend's changes (the hub's index). */
  subscribers: (backend: string) => number;
  /** Watcher state changes and source errors. */
  onStatus?: (s: WatcherStatus, err?: unknown) => void;
  /** Changes appended (metrics: events in). */
  onAppended?: (backend: string, n: number) => void;
  /** An append failed (logged; the log is in memory, so this is a bug). */
  onError?: (err: unknown) => void;
}

/** Watcher states in which its view is being (re)read: a new subscription waits them out. */
const SETTLING: ReadonlySet<WatcherState> = new Set(['STARTING', 'RESYNCING']);

const now = (): string => new Date().toISOString();

/** The volume's attachment the detach target names. */
function detachedOne(v: Volume, t: DetachTarget): Attachment | undefined {
  if (t.kind === 'server') return v.attachments.find((a) => a.consumer.__typename === 'VolumeServerConsumer' && a.consumer.serverId === t.serverId);
  if (t.kind === 'hostAttachment') return v.attachments.find((a) => a.consumerId === t.attachmentId || a.nativeId === t.attachmentId);
  return undefined;
}

/** The attachment an accepted attach is making, as ATTACHING. */
function attaching(ref: VolumeRef, t: AttachTarget, answered: Attachment | null | undefined): Attachment | null {
  if (answered) return answered.state === 'ATTACHED' ? null : { ...answered, state: 'ATTACHING' };
  if (t.kind !== 'server') return null;
  return {
    __typename: 'VolumeAttachment',
    volume: ref,
    consumerId: t.serverId,
    state: 'ATTACHING',
    backendState: null,
    stateReason: null,
    access: 'READ_WRITE',
    consumer: { __typename: 'VolumeServerConsumer', serverId: t.serverId, backend: ref.backend },
    device: t.device ?? null,
    attachedAt: null,
    nativeId: null,
    tag: t.tag ?? null,
    deleteOnTermination: t.deleteOnTermination ?? null,
  };
}

const withAttachment = (v: Volume, a: Attachment, state: AttachmentState): Volume => ({ ...v, attachments: [...v.attachments.filter((x) => x.consumerId !== a.consumerId), { ...a, state }] });

export class Feed implements LiveMutations {
  readonly #o: FeedOptions;
  readonly #watchers = new Map<string, VolumeWatcher>();
  readonly #unavailable = new Map<string, string>();
  /** Operations in progress, by id (from the tracker's changes). */
  readonly #pending = new Map<string, OperationRecord>();
  #chain: Promise<void> = Promise.resolve();
  #unsubscribe: (() => void) | null = null;
  #demandQueued = false;
  #stopped = false;
  /** `settled` waits, checked on every watcher state change. */
  readonly #settleWaiters = new Set<() => void>();

  constructor(o: FeedOptions) {
    this.#o = o;
  }

  /** Starts a watcher per watchable backend; the others are recorded with the reason. */
  start(): void {
    this.#unsubscribe = this.#o.operations.subscribe((r) => {
      if (TERMINAL.has(r.state)) this.#pending.delete(r.id);
      else this.#pending.set(r.id, r);
      this.requestDemand();
    });
    for (const b of this.#o.registry.all) {
      if (!isWatchable(b)) {
        this.#unavailable.set(b.id, `backend "${b.id}" has no watcher`);
        continue;
      }
      const w = b.createWatcher({ onDeltas: (d) => this.#onDeltas(b.id, d), onStatus: (st, err) => this.#onStatus(st, err) });
      if ('unavailable' in w) {
        this.#unavailable.set(b.id, w.unavailable);
        continue;
      }
      this.#watchers.set(b.id, w);
      w.start();
    }
    this.requestDemand();
  }

  /** The running watcher of a backend. */
  watcher(backend: string): VolumeWatcher | undefined {
    return this.#watchers.get(backend);
  }

  /** Why a backend has no watcher; undefined when it has one. */
  unavailable(backend: string): string | undefined {
    return this.#unavailable.get(backend);
  }

  statuses(): FeedStatus[] {
    return this.#o.registry.all.map((b) => {
      const w = this.#watchers.get(b.id);
      return { backend: b.id, available: w !== undefined, reason: this.#unavailable.get(b.id) ?? null, watcher: w ? w.status() : null };
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
    const ws = backends.flatMap((b) => this.#watchers.get(b) ?? []);
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
    return ws.filter((w) => {
      const { currentAt, state } = w.status();
      return currentAt === null && state !== 'IDLE';
    }).map((w) => w.backend);
  }

  #applyDemand(): void {
    this.#demandQueued = false;
    if (this.#stopped) return;
    const pending = new Map<string, VolumeRef[]>();
    for (const r of this.#pending.values()) {
      const t = decodeGlobalId(r.targetId, null);
      if (t.kind !== 'Volume') continue;
      pending.set(r.backend, [...(pending.get(r.backend) ?? []), { backend: t.backend, namespace: t.scope, nativeId: t.nativeId }]);
    }
    // Records name volumes, not servers: a watcher finds the servers from the volume's attachments.
    for (const [id, w] of this.#watchers) w.setDemand({ subscribers: this.#o.subscribers(id), pendingVolumes: pending.get(id) ?? [], pendingServers: [] });
  }

  /** Watcher state changes: logged by the server, and they may end `settled` waits. */
  #onStatus(s: WatcherStatus, err?: unknown): void {
    this.#o.onStatus?.(s, err);
    for (const check of [...this.#settleWaiters]) check();
  }

  accepted(c: AcceptedChange): void {
    const w = this.#watchers.get(c.volume.backend);
    if (!w || !c.pending) return;
    const view = w.volume(c.volume);
    let after: Volume | null = null;
    if (view && c.kind === 'ATTACH') {
      const a = attaching(c.volume, c.target as AttachTarget, c.attachment);
      if (a) after = withAttachment(view, a, 'ATTACHING');
    } else if (view && c.kind === 'DETACH') {
      const a = detachedOne(view, c.target as DetachTarget);
      if (a && a.state !== 'DETACHING') after = withAttachment(view, a, 'DETACHING');
    }
    if (view && after) {
      const changes = changesOf({ before: view, after, observedAt: now() }).filter((x) => x.type === 'ATTACHING' || x.type === 'DETACHING');
      this.#append(c.volume.backend, changes);
    }
    const server = c.target.kind === 'server' ? [c.target.serverId] : [];
    w.nudge([c.volume], server);
  }

  /** Stops every watcher. */
  async stop(): Promise<void> {
    this.#stopped = true;
    for (const check of [...this.#settleWaiters]) check();
    this.#unsubscribe?.();
    await Promise.all([...this.#watchers.values()].map((w) => w.stop()));
    await this.#chain;
  }

  #onDeltas(backend: string, deltas: VolumeDelta[]): void {
    try {
      this.#o.operations.observe?.(backend, deltas);
    } catch (err) {
      this.#o.onError?.(err);
    }
    this.#append(backend, deltas.flatMap(changesOf));
  }

  /** Appends in order: one chain for every source, so the log's order is the order observed. */
  #append(backend: string, changes: ReturnType<typeof changesOf>): void {
    if (changes.length === 0) return;
    this.#chain = this.#chain.then(async () => {
      for (const c of changes) await this.#o.log.append(c);
      this.#o.onAppended?.(backend, changes.length);
    }).catch((err: unknown) => this.#o.onError?.(err));
  }
}
