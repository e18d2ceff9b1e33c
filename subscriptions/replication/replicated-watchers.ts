/**
 * Watchers across replicas (docs/scaling.md): each backend's watcher runs on the one replica that
 * holds its lease; every other replica registers a {@link FollowerWatcher} over its follower view.
 *
 * - Gaining a lease starts the backend's watcher. Its first full read is compared with the
 *   follower view (what subscribers were last told): the differences are the changes to send, so a
 *   hand-over repeats nothing and misses nothing that happened while no replica watched. With no
 *   usable view (a new log, or a snapshot the log no longer reaches) the first read becomes the
 *   view, without events.
 * - Losing a lease (it expired, another replica took it, shutdown) stops the watcher at once; the
 *   log's fence refuses anything it still tries to append.
 * - The holder publishes its watcher's status and, every `snapshotEveryMs`, a snapshot of the view;
 *   followers read the status and publish their demand every `publishEveryMs`.
 * - Changes another replica announced reach the holder's memory of what was said (transitions.ts);
 *   changes of backends watched elsewhere reach this replica's tracker (watched operations).
 */
import type { VolumeBackend } from '../../adapters/contract/backend';
import type { Volume, VolumeRef } from '../../adapters/contract/model';
import type { VolumeDelta, VolumeWatcher, WatchDemand, WatcherState } from '../../adapters/contract/watch';
import { LeaseLostError } from '../events/errors';
import type { AppendOptions } from '../events/log';
import type { ChangeEvent } from '../events/types';
import { createWatcherOf, type WatcherHost, type WatcherSource } from '../live/watcher-source';
import { FollowerView } from './follower-view';
import { FollowerWatcher } from './follower-watcher';
import { LeasedWatcher } from './leased-watcher';
import { NO_DEMAND, type Nudge } from './shared-demand';
import { REPLICATION_DEFAULTS, type ReplicatedWatchersOptions, type ReplicationStatus } from './replication-options';
import { takeoverDeltas } from './takeover';
import { ViewFollower } from './view-follower';
import type { PublishedWatcher } from './watcher-board';

interface Entry {
  backend: VolumeBackend;
  follower: FollowerWatcher;
  leased: LeasedWatcher | null;
  /** The first read of a watcher just started under the lease is still to be compared with the view. */
  takeover: boolean;
  published: PublishedWatcher | null;
  demand: WatchDemand;
  nudges: Nudge[];
  nudgeSeq: number;
  /** Per other replica, the last nudge applied. */
  seenNudges: Map<string, number>;
  snapshot: { cursor: string | null; at: number };
  /** Since when a resync (after the log lost entries) waits for the rebuilt view; null: none. */
  resyncSince: number | null;
  /** When this replica gained the lease (its take-over compares only with a view read past it). */
  gainedAt: number;
  /** The follower's state the host was last told of. */
  told: WatcherState;
}

const MAX_NUDGES = 32;
/** Longest a resync waits for the view to be rebuilt from a snapshot before taking the watcher's read as it. */
const RESYNC_WAIT_MS = 30_000;

export class ReplicatedWatchers implements WatcherSource {
  readonly carriesViews = true;
  readonly keepsTransitions = true;
  readonly view = new FollowerView();
  readonly #o: ReplicatedWatchersOptions;
  readonly #entries = new Map<string, Entry>();
  #follower: ViewFollower | null = null;
  #host: WatcherHost | null = null;
  #timer: NodeJS.Timeout | null = null;
  #stopped = false;

  constructor(o: ReplicatedWatchersOptions) {
    this.#o = o;
  }

  start(backends: readonly VolumeBackend[], host: WatcherHost): Map<string, string> {
    this.#host = host;
    const unavailable = new Map<string, string>();
    for (const b of backends) {
      // Every replica has the same configuration: one that cannot watch means none can.
      const probe = createWatcherOf(b, host, unavailable);
      if (!probe) continue;
      void probe.stop().catch(() => undefined);
      const e: Entry = {
        backend: b,
        follower: undefined as unknown as FollowerWatcher,
        leased: null,
        takeover: false,
        published: null,
        demand: NO_DEMAND,
        nudges: [],
        nudgeSeq: 0,
        seenNudges: new Map(),
        snapshot: { cursor: null, at: 0 },
        resyncSince: null,
        gainedAt: 0,
        told: 'STARTING',
      };
      e.follower = new FollowerWatcher(b.id, {
        view: this.view,
        published: () => e.published,
        catchingUp: () => this.#follower?.catchingUp(b.id) ?? false,
        // Stopped (a SIGTERM's hand-over, before the drain): the view no longer moves, so it answers no read.
        following: () => !this.#stopped && (this.#o.following?.() ?? true),
        demand: (d) => (e.demand = d),
        nudge: (refs, servers) => this.#nudge(e, refs, servers),
      });
      this.#entries.set(b.id, e);
      host.register(b.id, e.follower);
    }
    this.#follower = new ViewFollower({
      log: this.#o.log,
      view: this.view,
      snapshots: this.#o.snapshots,
      backends: [...this.#entries.keys()],
      onApplied: (ev, before) => this.#applied(ev, before),
      onLost: (err, kind) => {
        // The log lost what the holders' watchers saw: each compares its watcher with the rebuilt view.
        if (kind !== 'log') this.#resync();
        this.#o.onLost?.(err);
      },
      onError: this.#o.onError,
    });
    this.#follower.start();
    this.#o.leases.contend([...this.#entries.keys()], (backend, held) => this.#leaseChanged(backend, held));
    this.#timer = setInterval(() => void this.#tick(), this.#o.publishEveryMs ?? REPLICATION_DEFAULTS.publishEveryMs);
    this.#timer.unref();
    return unavailable;
  }

  /**
   * Another Redis primary answers (a failover): rebuilds every follower view from Redis, and each
   * watcher this replica runs compares its volumes with the rebuilt view, appending what the log
   * lost (`takeoverDeltas`), as a new holder does.
   */
  primaryChanged(): void {
    if (this.#stopped) return;
    this.#follower?.rebuild();
    this.#resync();
  }

  appendFailed(backend: string, err: unknown): void {
    // A lost lease is the next holder's to make whole; anything else is this watcher's.
    if (err instanceof LeaseLostError) return;
    const e = this.#entries.get(backend);
    if (e) this.#resync([e]);
  }

  appendsSettled(backend: string): void {
    const e = this.#entries.get(backend);
    if (e?.takeover) this.#tryTakeover(e);
  }

  #resync(entries: Iterable<Entry> = this.#entries.values()): void {
    for (const e of entries) {
      if (!e.leased) continue;
      e.takeover = true;
      e.resyncSince = Date.now();
    }
  }

  /** Whether this replica runs the backend's watcher (holds its lease). */
  holds(backend: string): boolean {
    return this.#entries.get(backend)?.leased != null;
  }

  appendOptions(backend: string, remembered?: string): AppendOptions | undefined {
    if (!this.#entries.get(backend)?.leased) return undefined;
    const fence = this.#o.leases.fence(backend);
    // A holder whose lease lapsed locally writes nothing (the watcher stops when the lease says so).
    if (!fence) throw new LeaseLostError(`the lease of backend ${backend}`);
    return {
      fence,
      keep: remembered === undefined ? undefined : { key: this.#o.memories.key(backend), value: remembered },
    };
  }

  statuses(): ReplicationStatus[] {
    return [...this.#entries.values()].map((e) => ({
      backend: e.backend.id,
      role: e.leased ? 'HOLDER' : 'FOLLOWER',
      holder: e.leased ? this.#o.replica : (e.published?.replica ?? null),
      viewComplete: this.view.complete(e.backend.id),
      viewVolumes: this.view.size(e.backend.id),
    }));
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    if (this.#timer) clearInterval(this.#timer);
    this.#follower?.stop();
    const held = [...this.#entries.values()].filter((e) => e.leased);
    await Promise.all(held.map((e) => this.#drop(e)));
    await this.#o.leases.release();
    await Promise.all(
      [...this.#entries.keys()].map((b) => this.#o.demand.withdraw(b, this.#o.replica).catch(() => undefined)),
    );
  }

  #leaseChanged(backend: string, held: boolean): void {
    const e = this.#entries.get(backend);
    if (!e || this.#stopped || !this.#host) return;
    if (held && !e.leased) void this.#take(e);
    else if (!held && e.leased) void this.#drop(e);
  }

  /** Runs the watcher of a lease this replica just gained, remembering what the old holder did. */
  async #take(e: Entry): Promise<void> {
    const backend = e.backend.id;
    const remembered = await this.#o.memories.read(backend).catch((err: unknown) => {
      this.#o.onError?.(err);
      return null;
    });
    const host = this.#host;
    if (this.#stopped || !host || e.leased || !this.#o.leases.fence(backend)) return;
    if (remembered) host.restore(backend, remembered);
    const base = host.options(backend);
    const w = e.backend.watching!.createWatcher({
      onDeltas: (d) => this.#deltas(e, w as VolumeWatcher, d),
      onStatus: (s, err) => {
        base.onStatus?.(s, err);
        if (e.leased?.inner === w) {
          void this.#publish(e);
          this.#tryTakeover(e);
        }
      },
    });
    if ('unavailable' in w) return;
    e.leased = new LeasedWatcher(w);
    e.takeover = true;
    e.resyncSince = null;
    e.gainedAt = Date.now();
    host.register(backend, e.leased);
    w.start();
    this.#tryTakeover(e);
  }

  /** Stops the watcher of a lease this replica no longer holds; the follower takes its place. */
  async #drop(e: Entry): Promise<void> {
    const w = e.leased;
    if (!w) return;
    e.leased = null;
    e.takeover = false;
    this.#host?.register(e.backend.id, e.follower);
    await w.stop().catch((err: unknown) => this.#o.onError?.(err));
    await this.#o.board.withdraw(this.#o.replica, e.backend.id).catch(() => undefined);
  }

  #deltas(e: Entry, w: VolumeWatcher, d: VolumeDelta[]): void {
    if (e.leased?.inner !== w) return;
    // Until the first read was compared with the view, the comparison (with the whole view) stands for them.
    if (e.takeover) return this.#tryTakeover(e);
    this.#host?.options(e.backend.id).onDeltas(d);
  }

  /** Compares the new watcher's first full read with the follower view, once both are ready. */
  #tryTakeover(e: Entry): void {
    const w = e.leased;
    const id = e.backend.id;
    if (!w || !e.takeover || !w.current || this.#follower?.catchingUp(id)) return;
    // This replica's own appends still queued (behind one a slot migration holds up) are not in the
    // view yet: compared now, their changes would be sent again once they land.
    if (this.#host?.appending(id)) return;
    // The view must hold everything appended before the lease was gained, the resync began or this
    // replica's last append settled: what the old holder, or an append that only seemed to fail,
    // put in the log is not sent again.
    const since = Math.max(e.gainedAt, e.resyncSince ?? 0, this.#host?.appendsSettledAt(id) ?? 0);
    if (this.#o.followingSince && !this.#o.followingSince(since)) return;
    // After a loss, compare with the view rebuilt from Redis (loaded as is only if none comes).
    const waiting = Date.now() - (e.resyncSince ?? 0) < RESYNC_WAIT_MS && !this.#follower?.unusable(id);
    if (e.resyncSince !== null && !this.view.complete(id) && waiting) return;
    e.takeover = false;
    e.resyncSince = null;
    const read = w.volumes();
    if (!this.view.complete(id)) {
      // Nothing usable to compare with: the first read is the view, written for the others.
      this.view.load(id, read);
      this.#follower?.loaded(id, this.#follower.position);
      void this.#snapshot(e, true);
      return;
    }
    const deltas = takeoverDeltas(this.view.volumes(id), read, new Date().toISOString());
    if (deltas.length > 0) this.#host?.options(id).onDeltas(deltas);
  }

  #applied(ev: ChangeEvent, before: Volume | null): void {
    const e = this.#entries.get(ev.backend);
    if (!e || !this.#host) return;
    if (e.leased) {
      if (ev.announcedBy && ev.announcedBy !== this.#o.replica) this.#host.announced([ev]);
      return;
    }
    this.#host.observed(ev.backend, [
      { before, after: ev.type === 'DELETED' ? null : ev.volume, observedAt: ev.observedAt },
    ]);
  }

  #nudge(e: Entry, refs: readonly VolumeRef[], servers: readonly string[]): void {
    e.nudges.push({ seq: ++e.nudgeSeq, refs: [...refs], servers: [...servers] });
    if (e.nudges.length > MAX_NUDGES) e.nudges.shift();
    void this.#publishDemand(e);
  }

  async #publish(e: Entry): Promise<void> {
    if (e.leased)
      await this.#o.board.publish(this.#o.replica, e.leased).catch((err: unknown) => this.#o.onError?.(err));
  }

  async #publishDemand(e: Entry): Promise<void> {
    await this.#o.demand
      .publish(e.backend.id, { replica: this.#o.replica, demand: e.demand, nudges: e.nudges, at: Date.now() })
      .catch((err: unknown) => this.#o.onError?.(err));
  }

  /** Writes the holder's view of a backend when it moved (or `force`). */
  async #snapshot(e: Entry, force = false): Promise<void> {
    const id = e.backend.id;
    const every = this.#o.snapshotEveryMs ?? REPLICATION_DEFAULTS.snapshotEveryMs;
    const cursor = this.#follower?.position ?? null;
    const now = Date.now();
    if (!force && (now - e.snapshot.at < every || (cursor === e.snapshot.cursor && now - e.snapshot.at < every * 10)))
      return;
    try {
      const at = cursor ?? (await this.#o.log.head());
      // Held before written: no trim falls between the snapshot and the log after it. A position
      // the log no longer has (a failover lost it) would make a snapshot no replica can start from.
      if ((await this.#o.log.hold?.(id, at)) === false) return;
      await this.#o.snapshots.write(id, {
        cursor: at,
        volumes: this.view.volumes(id),
        replica: this.#o.replica,
        at: now,
      });
      e.snapshot = { cursor, at: now };
    } catch (err) {
      this.#o.onError?.(err);
    }
  }

  async #tick(): Promise<void> {
    for (const e of this.#entries.values()) {
      try {
        if (e.leased) {
          await this.#publish(e);
          const others = await this.#o.demand.gather(e.backend.id, this.#o.replica);
          const fresh = others.flatMap((o) => {
            const seen = e.seenNudges.get(o.replica) ?? 0;
            e.seenNudges.set(o.replica, Math.max(seen, ...o.nudges.map((n) => n.seq)));
            return o.nudges.filter((n) => n.seq > seen);
          });
          e.leased.setRemote(
            others.map((o) => o.demand),
            fresh,
          );
          if (this.view.complete(e.backend.id)) await this.#snapshot(e);
          this.#tryTakeover(e);
        } else {
          // Unreadable (Redis away) counts as no holder: this replica's view is no longer known current.
          e.published = await this.#o.board.read(e.backend.id).catch(() => null);
          // A new subscription waiting for the watcher to settle hears of it now, not at its deadline;
          // compared with what the host was told, as the view may have completed since (a catch-up).
          const status = e.follower.status();
          if (status.state !== e.told) {
            e.told = status.state;
            this.#host?.options(e.backend.id).onStatus?.(status);
          }
          await this.#publishDemand(e);
          if (!this.view.complete(e.backend.id) && e.published?.current) void this.#follower?.catchUp(e.backend.id);
        }
      } catch (err) {
        this.#o.onError?.(err);
      }
    }
  }
}
