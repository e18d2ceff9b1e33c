/**
 * Keeps a replica's follower view (follower-view.ts) in step with the shared event log: each
 * backend starts from its newest snapshot (snapshots.ts) and the log after it, then follows the
 * log live. Events a catch-up replays are not applied again when the live reader brings them, and
 * events that arrive while a backend catches up wait for it, so each backend's view moves through
 * the log's events once each, in order. A backend with no usable snapshot stays incomplete and
 * looks again every `retryMs`; a lost log (Redis flushed or restarted empty) makes every view
 * incomplete until the lease holders write new snapshots; a lost tail (a failover) or another
 * primary rebuilds every view from its snapshot at once.
 */
import { CursorExpiredError } from '../../adapters/contract/errors';
import type { Volume } from '../../adapters/contract/model';
import { compareCursors, decodeCursor } from '../events/cursor';
import type { EventLog, LogLoss } from '../events/log';
import type { ChangeEvent } from '../events/types';
import { FollowerView } from './follower-view';
import type { ViewSnapshots } from './snapshots';

/** Options of {@link ViewFollower}. */
export interface ViewFollowerOptions {
  log: EventLog;
  view: FollowerView;
  snapshots: ViewSnapshots;
  /** The backends to follow (those with a watcher). */
  backends: readonly string[];
  /** Every event applied, with the volume as the view held it before (null: not in it). Must not throw. */
  onApplied?: (e: ChangeEvent, before: Volume | null) => void;
  /** The log lost events this replica had applied (or had not read yet): the views are rebuilt. */
  onLost?: (err: Error, kind: LogLoss) => void;
  /** A snapshot read or a replay failed (logged). */
  onError?: (err: unknown) => void;
  /** How often a backend whose view is incomplete looks for a snapshot, in ms. @default 2000 */
  retryMs?: number;
  /** Events per replay page. @default 500 */
  replayPage?: number;
}

const later = (a: string, b: string | undefined): boolean =>
  b === undefined || compareCursors(decodeCursor(a), decodeCursor(b)) > 0;

export class ViewFollower {
  readonly #o: ViewFollowerOptions;
  /** Live events held back per backend while it catches up from a snapshot. */
  readonly #catching = new Map<string, ChangeEvent[]>();
  /** Per backend, the cursor of the last event its view took (replayed or live). */
  readonly #upTo = new Map<string, string>();
  #position: string | null = null;
  /** Backends whose newest catch-up found no snapshot to start from, or one the log cannot follow. */
  readonly #unusable = new Set<string>();
  #unlisten: (() => void) | null = null;
  #timer: NodeJS.Timeout | null = null;

  constructor(o: ViewFollowerOptions) {
    this.#o = o;
  }

  /** The cursor of the newest event applied (any backend); null before the first. */
  get position(): string | null {
    return this.#position;
  }

  /** Whether the backend's last catch-up found no usable snapshot (none, or one the log lost the position of). */
  unusable(backend: string): boolean {
    return this.#unusable.has(backend);
  }

  /** Whether a backend is catching up from a snapshot now. */
  catchingUp(backend: string): boolean {
    return this.#catching.has(backend);
  }

  start(): void {
    if (this.#unlisten) return;
    this.#unlisten = this.#o.log.listen(
      (e) => this.#onEvent(e),
      (err, kind) => this.#onLost(err, kind),
    );
    for (const b of this.#o.backends) void this.catchUp(b);
    this.#timer = setInterval(() => {
      for (const b of this.#o.backends) if (!this.#o.view.complete(b)) void this.catchUp(b);
    }, this.#o.retryMs ?? 2000);
    this.#timer.unref();
  }

  stop(): void {
    this.#unlisten?.();
    this.#unlisten = null;
    if (this.#timer) clearInterval(this.#timer);
  }

  /** Marks what a holder loaded itself (its first read, written as the snapshot) as taken up to `cursor`. */
  loaded(backend: string, cursor: string | null): void {
    if (cursor !== null && later(cursor, this.#upTo.get(backend))) this.#upTo.set(backend, cursor);
  }

  /**
   * Loads a backend's newest snapshot and replays the log after it; the view is replaced only when
   * that succeeded. Never rejects.
   */
  async catchUp(backend: string): Promise<void> {
    if (this.#catching.has(backend)) return;
    this.#catching.set(backend, []);
    try {
      const s = await this.#o.snapshots.read(backend);
      if (!s) {
        this.#unusable.add(backend);
        return;
      }
      const scratch = new FollowerView();
      scratch.load(backend, s.volumes);
      let last = s.cursor;
      for (;;) {
        const page = await this.#o.log.replay({ since: last, limit: this.#o.replayPage ?? 500 });
        for (const e of page.events) if (e.backend === backend) scratch.apply(e);
        last = page.events.at(-1)?.cursor ?? last;
        if (!page.more) break;
      }
      for (const e of this.#catching.get(backend) ?? []) {
        if (!later(e.cursor, last)) continue;
        scratch.apply(e);
        last = e.cursor;
      }
      this.#o.view.load(backend, scratch.volumes(backend));
      this.#unusable.delete(backend);
      this.#upTo.set(backend, last);
      if (later(last, this.#position ?? undefined)) this.#position = last;
    } catch (err) {
      if (err instanceof CursorExpiredError) this.#unusable.add(backend);
      this.#o.onError?.(err);
    } finally {
      this.#catching.delete(backend);
    }
  }

  #onEvent(e: ChangeEvent): void {
    const held = this.#catching.get(e.backend);
    if (held) {
      held.push(e);
      return;
    }
    if (!later(e.cursor, this.#upTo.get(e.backend))) return;
    const before = this.#o.view.apply(e);
    this.#upTo.set(e.backend, e.cursor);
    this.#position = e.cursor;
    if (!e.problem) this.#o.onApplied?.(e, before);
  }

  /**
   * Forgets every view and rebuilds each from its snapshot and the log after it, now: what this
   * replica applied may be gone from the log (another primary answers after a failover).
   */
  rebuild(): void {
    this.#forget();
    for (const b of this.#o.backends) void this.catchUp(b);
  }

  #forget(): void {
    this.#o.view.forgetAll();
    this.#upTo.clear();
    this.#position = null;
  }

  #onLost(err: Error, kind: LogLoss): void {
    this.#forget();
    this.#o.onLost?.(err, kind);
    // A new log has no snapshot yet (the holders write one); otherwise the snapshots still hold.
    if (kind !== 'log') for (const b of this.#o.backends) void this.catchUp(b);
  }
}
