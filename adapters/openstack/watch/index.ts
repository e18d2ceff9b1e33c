/**
 * The OpenStack watcher: adaptive polling with the gateway's service credential (docs/openstack.md,
 * "Live status"). Cinder has no change feed and no `changes-since` for volumes, and `updated_at`
 * filters miss deletions, so each poll lists every volume of the watched scope (all pages) and a
 * deletion shows as absence. Nova's attachment lists of the servers involved add what Cinder does
 * not list (attaches in progress, detaches that failed in nova-compute).
 *
 * Scheduling: fast while an operation is pending, or for a while after a volume's transition is
 * first seen (`motion.ts`: one that stays in motion stops counting, so no tenant holds it fast), slow
 * otherwise, not at all while nobody listens and nothing is pending (IDLE); failures back off.
 */
import type { CallOptions } from '../../contract/call-options';
import { UnauthenticatedError } from '../../contract/errors';
import type { Volume, VolumeRef } from '../../contract/model';
import type {
  VolumeDelta,
  VolumeWatcher,
  WatchDemand,
  WatcherOptions,
  WatcherState,
  WatcherStatus,
} from '../../contract/watch';
import { GatewayAttr, inBackground, inBackgroundSpan } from '../../http/tracing';
import { BreakerWatch } from '../../watch-breakers';
import { OpenStackClient, type OpenStackClientOptions } from '../client';
import type { NovaVolumeAttachment } from '../nova/results';
import { TransitionWindows } from './motion';
import { listEveryVolume, readServerLists, scopeOf, type WatchScope } from './read';
import { diffViews } from '../../contract/view-diff';
import { byVolume, novaSaysMore, serversChanged, withNovaAttachments } from './view';

/** Options of the OpenStack watcher (the backend supplies the intervals from its configuration). */
export interface OpenStackWatcherOptions extends WatcherOptions {
  /** Poll interval while an operation is pending or a transition is in its window (ms). @default 500 */
  fastMs?: number;
  /**
   * How long one transition of a volume (per volume and status) keeps polling fast after it is
   * first seen (ms); past it the volume waits for the slow interval unless a new transition starts.
   * @default 30000
   */
  transitionWindowMs?: number;
  /** Poll interval otherwise, while anyone listens (ms). @default 10000 */
  slowMs?: number;
  /** Report the first full read as CREATED deltas. @default false */
  reportInitial?: boolean;
  /** Volumes per list page (Cinder caps it at 1000). @default 1000 */
  pageSize?: number;
  /** Most Nova attachment lists read in one poll. @default 16 */
  maxServerReads?: number;
  /** Longest wait between retries after failures (ms). @default 30000 */
  maxBackoffMs?: number;
}

export const WATCH_DEFAULTS = {
  fastMs: 500,
  slowMs: 10_000,
  transitionWindowMs: 30_000,
  maxServerReads: 16,
  maxBackoffMs: 30_000,
} as const;

/** The watcher's own connections per origin: it reads one list page or a few Nova lists at a time. */
const WATCHER_CONNECTIONS = 4;

/** What {@link createWatcher} needs of its backend's settings. */
export type OpenStackWatcherSource = OpenStackClientOptions & {
  watchFastMs?: number;
  watchSlowMs?: number;
  watchTransitionWindowMs?: number;
};

/**
 * A watcher with its own client (own pools, closed by its `stop()`; the same service credential),
 * or `unavailable` without a service credential. `o` may carry `OpenStackWatcherOptions` (tests).
 */
export function createWatcher(
  backend: string,
  client: OpenStackClient,
  s: OpenStackWatcherSource,
  o: WatcherOptions & Partial<OpenStackWatcherOptions>,
): VolumeWatcher | { unavailable: string } {
  if (!client.keystone.hasServiceAuth)
    return {
      unavailable: `backend "${backend}" has no service credential configured (auth): OpenStack has no live status without one`,
    };
  const own = new OpenStackClient({
    ...s,
    maxConnections: Math.min(s.maxConnections ?? WATCHER_CONNECTIONS, WATCHER_CONNECTIONS),
  });
  return new OpenStackWatcher(backend, own, {
    fastMs: s.watchFastMs ?? WATCH_DEFAULTS.fastMs,
    slowMs: s.watchSlowMs ?? WATCH_DEFAULTS.slowMs,
    transitionWindowMs: s.watchTransitionWindowMs ?? WATCH_DEFAULTS.transitionWindowMs,
    ...o,
  });
}

const NO_DEMAND: WatchDemand = { subscribers: 0, pendingVolumes: [], pendingServers: [] };

type Mode = 'IDLE' | 'FAST' | 'SLOW';

export class OpenStackWatcher implements VolumeWatcher {
  readonly backend: string;
  readonly #client: OpenStackClient;
  readonly #o: OpenStackWatcherOptions;
  readonly #fastMs: number;
  readonly #slowMs: number;
  readonly #abort = new AbortController();
  #state: WatcherState = 'STARTING';
  #started = false;
  #stopped = false;
  #demand: WatchDemand = NO_DEMAND;
  /** One poll asked for by `nudge`, with the servers it named. */
  #nudged = false;
  #nudgedServers = new Set<string>();
  /** The view as reported (Cinder plus Nova's extra attachments) and Cinder's alone, by lower-case id. */
  #view = new Map<string, Volume>();
  #cinder = new Map<string, Volume>();
  /** Nova lists of the servers being followed, with when each was read. */
  #nova = new Map<string, { list: NovaVolumeAttachment[]; readAt: number }>();
  readonly #windows: TransitionWindows;
  /** Until when a transition's window keeps polling fast (ms since the epoch; 0: none). */
  #fastUntil = 0;
  #readOnce = false;
  #scope: WatchScope | null = null;
  #currentAt: number | null = null;
  #lastStart = 0;
  #failures = 0;
  #lastError: string | null = null;
  #timer: NodeJS.Timeout | null = null;
  #inFlight: Promise<void> | null = null;
  readonly #breakers: BreakerWatch;

  /** `client` is the watcher's own (its pools close with `stop()`), holding the service credential. */
  constructor(backend: string, client: OpenStackClient, o: OpenStackWatcherOptions) {
    this.backend = backend;
    this.#client = client;
    this.#o = o;
    this.#fastMs = o.fastMs ?? WATCH_DEFAULTS.fastMs;
    this.#slowMs = Math.max(o.slowMs ?? WATCH_DEFAULTS.slowMs, this.#fastMs);
    this.#windows = new TransitionWindows(o.transitionWindowMs ?? WATCH_DEFAULTS.transitionWindowMs);
    this.#breakers = new BreakerWatch((['identity', 'volume', 'compute'] as const).map((s) => client.breaker(s)));
  }

  get current(): boolean {
    return this.#state === 'POLLING' && this.#currentAt !== null;
  }

  /** Whether it sees project `scope`: every project for an admin service user, else its own; false before a read. */
  covers(scope: string): boolean {
    const s = this.#scope;
    return s !== null && (s.allProjects || s.projectId === scope);
  }

  onlyScope(): string | null {
    const s = this.#scope;
    return s !== null && !s.allProjects ? s.projectId : null;
  }

  start(): void {
    if (this.#started || this.#stopped) return;
    this.#started = true;
    // A breaker that opens makes the view stale now, not after the next poll's deadline; the next
    // poll that succeeds (the breaker's half-open probe, maybe) makes it POLLING again.
    this.#breakers.start({
      opened: (_s, why) => {
        if (this.#stopped || this.#state === 'IDLE' || this.#state === 'DEGRADED') return;
        this.#lastError = why;
        this.#setState('DEGRADED');
      },
    });
    if (this.#mode() === 'IDLE') this.#setState('IDLE');
    else this.#runSoon(0);
  }

  async stop(): Promise<void> {
    if (this.#stopped) return;
    this.#stopped = true;
    this.#breakers.stop();
    this.#clearTimer();
    this.#abort.abort(new Error(`watcher of backend "${this.backend}" stopped`));
    await this.#inFlight?.catch(() => undefined);
    await this.#client.close();
    this.#setState('STOPPED');
  }

  status(): WatcherStatus {
    const now = Date.now();
    return {
      backend: this.backend,
      state: this.#state,
      source: 'POLLING',
      volumes: this.#view.size,
      currentAt: this.#currentAt,
      lagMs: this.#currentAt === null ? null : now - this.#currentAt,
      message: this.#state === 'DEGRADED' && this.#lastError ? this.#lastError : this.#scopeText(),
    };
  }

  volume(ref: VolumeRef): Volume | undefined {
    if (ref.backend !== this.backend) return undefined;
    const v = this.#view.get(ref.nativeId.toLowerCase());
    return v && v.ref.namespace === ref.namespace ? v : undefined;
  }

  volumes(): Volume[] {
    return [...this.#view.values()];
  }

  setDemand(d: WatchDemand): void {
    const wasIdle = this.#mode() === 'IDLE';
    this.#demand = {
      subscribers: d.subscribers,
      pendingVolumes: [...d.pendingVolumes],
      pendingServers: [...d.pendingServers],
    };
    if (!this.#started || this.#stopped) return;
    // Someone starts listening: read at once rather than after an interval, and say so now (a new
    // subscription waits while the view is being re-read).
    if (wasIdle && this.#mode() !== 'IDLE' && !this.#inFlight) {
      this.#wake();
      this.#runSoon(0);
    } else this.#schedule();
  }

  nudge(refs: readonly VolumeRef[], servers: readonly string[] = []): void {
    if (this.#stopped) return;
    this.#nudged = refs.length > 0 || servers.length > 0 || this.#nudged;
    for (const s of servers) this.#nudgedServers.add(s.toLowerCase());
    if (this.#started) this.#schedule();
  }

  // ---- scheduling -------------------------------------------------------------------------------

  #mode(): Mode {
    const d = this.#demand;
    const pending = d.pendingVolumes.length > 0 || d.pendingServers.length > 0;
    if (d.subscribers <= 0 && !pending) return 'IDLE';
    // The gateway's own operations keep it fast until they end; anything else only within its window.
    return pending || Date.now() < this.#fastUntil ? 'FAST' : 'SLOW';
  }

  /** Plans the next poll from the last one's start (none while IDLE, unless nudged). */
  #schedule(): void {
    if (this.#stopped || !this.#started || this.#inFlight) return;
    const mode = this.#mode();
    if (mode === 'IDLE' && !this.#nudged) {
      this.#clearTimer();
      this.#setState('IDLE');
      return;
    }
    const interval =
      this.#failures > 0 ? this.#backoffMs() : mode === 'FAST' || this.#nudged ? this.#fastMs : this.#slowMs;
    this.#runSoon(Math.max(0, this.#lastStart + interval - Date.now()));
  }

  #backoffMs(): number {
    return Math.min(
      this.#o.maxBackoffMs ?? WATCH_DEFAULTS.maxBackoffMs,
      this.#fastMs * 2 ** Math.min(this.#failures, 16),
    );
  }

  #runSoon(delayMs: number): void {
    this.#clearTimer();
    // Background work (docs/tracing.md), also when a request's nudge scheduled it.
    this.#timer = setTimeout(() => inBackground(() => this.#run()), delayMs);
  }

  #clearTimer(): void {
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = null;
  }

  #run(): void {
    this.#timer = null;
    if (this.#stopped || this.#inFlight) return;
    this.#lastStart = Date.now();
    const nudgedServers = [...this.#nudgedServers];
    this.#nudged = false;
    this.#nudgedServers.clear();
    this.#wake();
    this.#inFlight = this.#poll(nudgedServers)
      .then(
        (deltas) => {
          this.#failures = 0;
          this.#lastError = null;
          this.#setState('POLLING');
          if (deltas.length > 0 && !this.#stopped) this.#emit(deltas);
        },
        (err: unknown) => {
          if (this.#stopped) return;
          this.#failures++;
          this.#lastError = err instanceof Error ? err.message : String(err);
          this.#setState('DEGRADED', err);
        },
      )
      .finally(() => {
        this.#inFlight = null;
        this.#schedule();
      });
  }

  /** Back from IDLE the old view is stale until the next read: what changed meanwhile comes out as deltas. */
  #wake(): void {
    if (this.#state === 'IDLE') this.#setState(this.#readOnce ? 'RESYNCING' : 'STARTING');
  }

  // ---- one poll ---------------------------------------------------------------------------------

  /** Reads once; a 401 on the service token (revoked) re-authenticates and reads again, once. */
  #poll(nudgedServers: string[]): Promise<VolumeDelta[]> {
    // One span per poll (docs/tracing.md): its Keystone, Cinder and Nova calls are its children.
    return inBackgroundSpan('poll volumes', { [GatewayAttr.backend]: this.backend }, async () => {
      try {
        return await this.#read(nudgedServers);
      } catch (err) {
        // The client forgot the refused token, so the service session is issued afresh.
        if (err instanceof UnauthenticatedError && !this.#abort.signal.aborted) return this.#read(nudgedServers);
        throw err;
      }
    });
  }

  async #read(nudgedServers: string[]): Promise<VolumeDelta[]> {
    const session = await this.#client.keystone.serviceSession();
    const scope = scopeOf(session);
    const o: CallOptions = { credential: { token: session.token }, signal: this.#abort.signal };
    const { volumes: cinder } = await listEveryVolume(this.#client, scope, o, this.#o.pageSize);
    const now = Date.now();
    const lists = await readServerLists(this.#client, this.#serversToRead(cinder, nudgedServers, now), o);
    for (const [server, list] of lists) this.#nova.set(server, { list, readAt: now });
    const keep = new Set(this.#demand.pendingServers.map((s) => s.toLowerCase()));
    // A server whose list says nothing Cinder does not is no longer followed.
    for (const [server, e] of this.#nova)
      if (!keep.has(server) && !novaSaysMore(server, e.list, cinder)) this.#nova.delete(server);
    const nova = byVolume(new Map([...this.#nova].map(([s, e]) => [s, e.list] as const)));
    const view = new Map<string, Volume>();
    for (const [id, v] of cinder) view.set(id, withNovaAttachments(v, nova.get(id)));
    if (this.#stopped) return [];
    const deltas =
      this.#readOnce || this.#o.reportInitial ? diffViews(this.#view, view, new Date(now).toISOString()) : [];
    this.#view = view;
    this.#cinder = cinder;
    this.#scope = scope;
    this.#readOnce = true;
    this.#currentAt = now;
    this.#fastUntil = this.#windows.update(view, now);
    return deltas;
  }

  /**
   * Servers whose Nova list this poll reads, at most `maxServerReads`, most wanted first: pending
   * operations' servers, nudged ones, servers whose attachment Cinder just listed or dropped, then
   * followed servers Nova said more about, each at most once per slow interval (oldest first).
   */
  #serversToRead(cinder: ReadonlyMap<string, Volume>, nudged: string[], now: number): string[] {
    const changed: string[] = [];
    if (this.#readOnce) {
      for (const [id, v] of cinder) changed.push(...serversChanged(this.#cinder.get(id), v));
      for (const [id, v] of this.#cinder) if (!cinder.has(id)) changed.push(...serversChanged(v, undefined));
    }
    const stale = [...this.#nova]
      .filter(([, e]) => now - e.readAt >= this.#slowMs)
      .sort((a, b) => a[1].readAt - b[1].readAt)
      .map(([s]) => s);
    const wanted = [...this.#demand.pendingServers.map((s) => s.toLowerCase()), ...nudged, ...changed, ...stale];
    return [...new Set(wanted)].slice(0, this.#o.maxServerReads ?? WATCH_DEFAULTS.maxServerReads);
  }

  // ---- reporting --------------------------------------------------------------------------------

  #emit(deltas: VolumeDelta[]): void {
    try {
      this.#o.onDeltas(deltas);
    } catch {
      // onDeltas must not throw; a listener's bug must not stop the watcher.
    }
  }

  #setState(state: WatcherState, err?: unknown): void {
    const changed = state !== this.#state;
    this.#state = state;
    if (!changed && err === undefined) return;
    try {
      this.#o.onStatus?.(this.status(), err);
    } catch {
      // Same as onDeltas.
    }
  }

  #scopeText(): string {
    const s = this.#scope;
    if (!s) return 'scope not known yet (no read so far)';
    return s.allProjects
      ? 'watching every project (service user is an admin: all_tenants)'
      : `watching project ${s.projectId} only (service user is not an admin)`;
  }
}
