/**
 * The live view of one Nomad (docs/nomad.md "Watching"), read with the backend's service token.
 *
 * - Source: `/v1/event/stream` (topics `CSIVolume` and `Allocation`, every namespace) on the
 *   watcher's own connection (`connection.ts`). Event payloads are never mapped (they carry
 *   `Allocations: []` and stale health: hashicorp/nomad nomad/state/events.go): each event only
 *   names a volume to read again (an Allocation event, the volumes the view has that allocation
 *   claiming). Events that arrive together are coalesced, so one volume is read once per burst:
 *   load follows the rate of change, not the number of subscribers.
 * - Every connect lists all volumes first (stubs carry ModifyIndex, which claims move too) and
 *   opens the stream after the higher of that list's index and the last index seen. A reconnect
 *   then reads again only what moved, plus the claimed volumes (an allocation's status is not a
 *   volume write), and treats unlisted volumes as deleted. This closes the gap Nomad leaves
 *   silently when the asked index has left its event buffer.
 * - Fallback, when the stream is refused (404/405/400 from an older Nomad, 403 from ACLs even for
 *   `CSIVolume` alone) or fails `streamFailuresBeforeFallback` times in a row: blocking queries on
 *   the volume list, reading what moved, and the claimed volumes every `claimRefreshMs`. The
 *   stream is tried again every `streamRetryMs`, and at once when a breaker of the backend closes.
 * - An open breaker is no failure of the stream: the watcher waits for the background probe to
 *   close it (server/readiness.ts) and reconnects then, never counting towards the fallback.
 * - Reads, lists and view updates run one at a time (a serial queue), so a volume's deltas keep
 *   the order the backend made them in.
 */
import type { CallOptions } from '../../contract/call-options';
import { BreakerOpenError, type Breaker } from '../../contract/breaker';
import { inBackground } from '../../http/tracing';
import type { Volume, VolumeRef } from '../../contract/model';
import type {
  VolumeDelta,
  VolumeWatcher,
  WatchDemand,
  WatcherOptions,
  WatcherState,
  WatcherStatus,
} from '../../contract/watch';
import type { NomadClient } from '../client';
import * as req from '../volumes/requests';
import { blockingListCall } from './requests';
import { num } from '../wire/scalars';
import type { WireEventFrame, WireVolumeStub } from '../wire/types';
import type { WatchConnection } from './connection';
import { StreamLiveness } from './liveness';
import { DirtyVolumes } from './dirty';
import { rereadVolumes } from './reread';
import { SourceChoice, type Outcome } from './source';
import { Pauses, withDefaults, type NomadWatchTuning } from './tuning';
import { refKey, WatchView } from './view';

/** What a watcher needs from its backend. */
export interface NomadWatchDeps {
  backend: string;
  /** The backend's pooled client, for short reads and lists. */
  client: NomadClient;
  /** The watcher's own connections, for the stream and blocking queries; closed by `stop()`. */
  connection: WatchConnection;
  /** The service token. */
  token: string;
  /** The backend's breakers: the watcher reports DEGRADED as soon as one opens. @default none */
  breakers?: readonly Breaker[];
}

const TOPICS_ALL = ['CSIVolume', 'Allocation'] as const;

export class NomadWatcher implements VolumeWatcher {
  readonly backend: string;
  readonly #d: NomadWatchDeps;
  readonly #o: WatcherOptions;
  readonly #t: Required<NomadWatchTuning>;
  readonly #view: WatchView;
  readonly #stop = new AbortController();
  #state: WatcherState = 'STARTING';
  #message: string | null = null;
  #currentAt: number | null = null;
  #current = false;
  #lastIndex = 0;
  #synced = false;
  #topics: readonly string[] = TOPICS_ALL;
  #serial: Promise<void> = Promise.resolve();
  readonly #dirty: DirtyVolumes;
  #running: Promise<void> | null = null;
  readonly #pauses = new Pauses();
  readonly #choice: SourceChoice;
  /** A stream is open and its first list applied; the state is a breaker's DEGRADED (not a failure of the watcher's own reads). */
  #streaming = false;
  #breakerDegraded = false;
  readonly #liveness: StreamLiveness;

  constructor(deps: NomadWatchDeps, options: WatcherOptions, tuning: NomadWatchTuning = {}) {
    this.backend = deps.backend;
    this.#d = deps;
    this.#o = options;
    this.#view = new WatchView(deps.backend);
    this.#t = withDefaults(tuning);
    this.#liveness = new StreamLiveness(deps.breakers ?? [], this.#t.heartbeatTimeoutMs);
    this.#choice = new SourceChoice(this.#t.streamRetryMs);
    this.#dirty = new DirtyVolumes((take) => {
      void this.#enqueue(async () => {
        const refs = take();
        if (refs.length > 0) this.#emit(await this.#readAll(refs));
      });
    });
  }

  get current(): boolean {
    return this.#current;
  }

  start(): void {
    if (this.#running) return;
    // An open breaker means Nomad stopped answering: say so now, not after the heartbeat allowance.
    this.#liveness.watchBreakers(
      (_s, why) => {
        if (this.#stopped || this.#state === 'DEGRADED') return;
        this.#degrade(null, why);
        this.#breakerDegraded = true;
      },
      () => this.#resume(),
      () => {
        // Nomad answers again: back to the stream now, from a pause or from blocking queries.
        this.#choice.streamNow();
        this.#pauses.wakeAll();
      },
    );
    // Its list, stream and re-reads are background work (docs/tracing.md), whoever started it.
    this.#running = inBackground(() => this.#run());
  }

  async stop(): Promise<void> {
    this.#liveness.stop();
    this.#stop.abort();
    this.#pauses.wakeAll();
    this.#dirty.stop();
    await this.#running?.catch(() => undefined);
    await this.#serial.catch(() => undefined);
    await this.#d.connection.close();
    this.#current = false;
    this.#set('STOPPED', null);
  }

  status(): WatcherStatus {
    return {
      backend: this.backend,
      state: this.#state,
      source: this.#choice.source,
      volumes: this.#view.size,
      currentAt: this.#currentAt,
      lagMs: this.#currentAt === null ? null : Math.max(0, Date.now() - this.#currentAt),
      message: this.#message,
    };
  }

  volume(ref: VolumeRef): Volume | undefined {
    return this.#view.get(ref);
  }

  volumes(): Volume[] {
    return this.#view.all();
  }

  /** Ignored: the stream costs the same with or without listeners, and its changes are what keep watch-fed reads right. */
  setDemand(_d: WatchDemand): void {}

  /** Reads these volumes again soon (after whatever is queued). */
  nudge(refs: readonly VolumeRef[]): void {
    for (const r of refs) if (r.backend === this.backend) this.#dirty.mark(r);
  }

  // ---- main loop -----------------------------------------------------------------------------
  async #run(): Promise<void> {
    const c = this.#choice;
    while (!this.#stopped) {
      let out: Outcome;
      if (c.streamNext) {
        const retrying = c.source === 'BLOCKING_QUERY';
        if (retrying) this.#topics = TOPICS_ALL;
        out = await this.#streamOnce();
        if (out === 'reconnect') continue;
        if (out === 'refused') {
          // Nomad is known to be down: wait for the probe to close the breaker (then at once), not a backoff.
          if (this.#liveness.breakerOpen) await this.#pauses.pause(this.#t.maxBackoffMs);
          continue;
        }
        // Still not streaming after a retry from fallback: back to blocking queries for a while.
        if (out === 'fallback' || (retrying && c.source === 'BLOCKING_QUERY' && out === 'failed')) {
          c.fallback();
          continue;
        }
        if (out === 'failed' && ++c.failures >= this.#t.streamFailuresBeforeFallback) {
          this.#message = `event stream failed ${c.failures} times in a row; following blocking queries`;
          c.fallback();
          continue;
        }
      } else {
        out = await this.#blockingOnce();
        if (out === 'failed') c.failures++;
      }
      if (out === 'stopped') break;
      if (out === 'failed')
        await this.#pauses.pause(Math.min(this.#t.maxBackoffMs, this.#t.backoffMs * 2 ** Math.max(0, c.failures - 1)));
    }
  }

  get #stopped(): boolean {
    return this.#stop.signal.aborted;
  }

  #options(signal: AbortSignal = this.#stop.signal): CallOptions & { signal: AbortSignal } {
    return { credential: { token: this.#d.token }, signal };
  }

  /** One stream connection: list, open after the list's index, apply the list, follow frames. */
  async #streamOnce(): Promise<Outcome> {
    const conn = new AbortController();
    const signal = AbortSignal.any([this.#stop.signal, conn.signal]);
    let opened = false;
    try {
      this.#set(this.#synced ? 'RESYNCING' : 'STARTING', this.#message);
      const list = await req.listVolumeStubs(this.#d.client, { namespace: '*' }, this.#options());
      const from = Math.max(this.#lastIndex, list.meta.index) + 1;
      const stream = await this.#d.connection.openEvents(this.#topics, from, this.#options(signal));
      if ('fallback' in stream) {
        this.#message = stream.fallback;
        return 'fallback';
      }
      this.#topics = stream.topics;
      if (stream.note) this.#message = stream.note;
      opened = true;
      this.#choice.source = 'EVENT_STREAM';
      const resync = this.#synced;
      // Not awaited: the stream is followed meanwhile, and the reads its frames cause queue behind
      // the list; #enqueue turns a failure into a degraded watcher.
      void this.#enqueue(async () => {
        await this.#applyList(list.data ?? [], list.meta.index, resync);
        if (conn.signal.aborted) return;
        this.#streaming = true;
        this.#set('STREAMING', null);
      });
      const openedAt = Date.now();
      if ((await this.#follow(stream.lines, conn)) === 'reconnect') return 'reconnect';
      // A stream that served a while was no failure; one that ends at once is.
      if (Date.now() - openedAt > this.#t.heartbeatTimeoutMs) this.#choice.failures = 0;
      return this.#stopped ? 'stopped' : 'failed';
    } catch (err) {
      if (this.#stopped) return 'stopped';
      this.#degrade(err, opened ? 'event stream failed' : 'could not open the event stream');
      return err instanceof BreakerOpenError ? 'refused' : 'failed';
    } finally {
      this.#streaming = false;
      conn.abort();
    }
  }

  /** Reads frames until the stream ends, errs, or stays silent past the heartbeat timeout; `reconnect` when a breaker's closing ended it silent. */
  async #follow(lines: AsyncIterable<string>, conn: AbortController): Promise<'ended' | 'reconnect'> {
    let reason = 'event stream ended';
    let breakerClosed = false;
    this.#liveness.listen((why, closed) => {
      reason = why;
      breakerClosed = closed;
      conn.abort();
    });
    try {
      for await (const line of lines) {
        const mayResume = this.#liveness.heard();
        const frame = JSON.parse(line) as WireEventFrame;
        if (typeof frame.Error === 'string') throw new Error(`event stream error: ${frame.Error}`);
        if (mayResume) this.#resume(); // the stream held while a breaker was open (a stopped Nomad continued): it lost nothing
        if (this.#state === 'STREAMING') this.#currentAt = Date.now();
        const index = num(frame.Index ?? null);
        if (index !== null && index > this.#lastIndex) this.#lastIndex = index;
        for (const e of frame.Events ?? []) {
          if (e.Topic === 'CSIVolume') this.#dirty.mark(this.#view.ref(e.Namespace, e.Key));
          else if (e.Topic === 'Allocation') for (const r of this.#view.claimedBy(e.Key)) this.#dirty.mark(r);
        }
      }
    } catch (err) {
      if (!conn.signal.aborted || this.#stopped) throw err;
    } finally {
      this.#liveness.quiet();
    }
    if (this.#stopped) return 'ended';
    this.#degrade(null, reason);
    return breakerClosed ? 'reconnect' : 'ended';
  }

  /** One blocking-query round (fallback): list after the last index, read what moved. */
  async #blockingOnce(): Promise<Outcome> {
    let lastClaimRefresh = 0;
    let index = 0;
    const round = this.#choice.beginRound();
    try {
      while (!this.#stopped && !this.#choice.streamNext) {
        const wait = Math.min(this.#t.blockingWaitMs, Math.max(1, this.#choice.streamAgainAt - Date.now()));
        const call = blockingListCall(index, wait);
        const list = await this.#d.connection.get<WireVolumeStub[]>(
          call,
          this.#options(AbortSignal.any([this.#stop.signal, round.signal])),
          wait + wait / 16 + 10_000,
        );
        index = list.meta.index;
        const refreshClaims = Date.now() - lastClaimRefresh >= this.#t.claimRefreshMs;
        if (refreshClaims) lastClaimRefresh = Date.now();
        await this.#enqueue(() => this.#applyList(list.data ?? [], list.meta.index, refreshClaims));
        this.#set('POLLING', this.#message);
        this.#choice.failures = 0;
      }
      return this.#stopped ? 'stopped' : 'timeup';
    } catch (err) {
      if (this.#stopped) return 'stopped';
      if (round.signal.aborted) return 'timeup';
      this.#degrade(err, 'blocking query failed');
      return 'failed';
    } finally {
      this.#choice.endRound(round);
    }
  }

  // ---- the view ------------------------------------------------------------------------------
  /** Applies a full list: reads what moved (and the claimed volumes when `claims`), drops what is gone. */
  async #applyList(stubs: readonly WireVolumeStub[], index: number, claims: boolean): Promise<void> {
    const plan = this.#view.plan(stubs);
    const read = new Map(plan.read.map((r) => [refKey(r), r]));
    if (claims) for (const r of this.#view.claimed()) read.set(refKey(r), r);
    const deltas: VolumeDelta[] = [];
    const observedAt = new Date().toISOString();
    for (const r of plan.gone) {
      const d = this.#view.apply(r, null, observedAt);
      if (d) deltas.push(d);
    }
    const initial = !this.#synced;
    deltas.push(...(await this.#readAll([...read.values()])));
    if (index > this.#lastIndex) this.#lastIndex = index;
    this.#synced = true;
    this.#current = true;
    this.#currentAt = Date.now();
    if (!initial || this.#t.reportInitial) this.#emit(deltas);
  }

  /** Reads volumes in full and records them (reread.ts); after a failed read, retries the failed ones after a pause. */
  async #readAll(refs: readonly VolumeRef[]): Promise<VolumeDelta[]> {
    const parts = {
      backend: this.backend,
      client: this.#d.client,
      view: this.#view,
      dirty: this.#dirty,
      concurrency: this.#t.readConcurrency,
    };
    const { deltas, failed } = await rereadVolumes(parts, refs, this.#options());
    if (failed && !this.#stopped) {
      this.#o.onStatus?.(this.status(), failed);
      this.#dirty.retryAfter(this.#t.backoffMs);
    }
    return deltas;
  }

  /** Runs `fn` after everything queued before it. */
  #enqueue(fn: () => Promise<void>): Promise<void> {
    const next = this.#serial.then(() => (this.#stopped ? undefined : fn()));
    this.#serial = next.catch((err: unknown) => {
      if (!this.#stopped) this.#degrade(err, 'reading volumes failed');
    });
    return next;
  }

  #emit(deltas: VolumeDelta[]): void {
    if (deltas.length === 0 || this.#stopped) return;
    try {
      this.#o.onDeltas(deltas);
    } catch {
      /* onDeltas must not throw; a listener's bug must not stop the watcher */
    }
  }

  // ---- state ---------------------------------------------------------------------------------

  #set(state: WatcherState, message: string | null, err?: unknown): void {
    this.#breakerDegraded = false;
    const changed = state !== this.#state || message !== this.#message;
    this.#state = state;
    this.#message = message;
    if (changed || err !== undefined) this.#o.onStatus?.(this.status(), err);
  }

  /** Back to STREAMING after a breaker's DEGRADED, when the stream that held meanwhile still runs. */
  #resume(): void {
    if (!this.#breakerDegraded || this.#state !== 'DEGRADED' || !this.#streaming || this.#stopped) return;
    this.#current = true;
    this.#currentAt = Date.now();
    this.#set('STREAMING', null);
  }

  #degrade(err: unknown, what: string): void {
    this.#current = false;
    // Not `instanceof Error`: errors from another realm (Node internals under a test runner) fail it.
    const text = typeof err === 'object' && err !== null && 'message' in err ? String(err.message) : '';
    const why = text ? `: ${text}` : '';
    this.#set('DEGRADED', `${what}${why}`, err ?? undefined);
  }
}
