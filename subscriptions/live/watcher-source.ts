/**
 * Where the feed's watchers come from. In one process every watchable backend gets its own watcher
 * here ({@link LocalWatchers}); with several replicas on Redis one replica per backend runs it
 * under a lease and the others follow the shared log (subscriptions/replication/).
 */
import type { VolumeBackend } from '../../adapters/contract/backend';
import type { VolumeDelta, VolumeWatcher, WatcherOptions } from '../../adapters/contract/watch';
import type { AppendOptions } from '../events/log';
import type { TransitionsState } from '../events/transitions';
import type { ChangeInput } from '../events/types';

/** What the feed gives a source. */
export interface WatcherHost {
  /** Makes `w` the backend's watcher in the directory (replacing any earlier one). */
  register(backend: string, w: VolumeWatcher): void;
  /** The options a backend's watcher is created with (the feed's delta and status handlers). */
  options(backend: string): WatcherOptions;
  /** Another replica's announcements (ATTACHING/DETACHING it sent) of one backend, as read from the shared log. */
  announced(changes: readonly ChangeInput[]): void;
  /** The transitions memory (`Transitions.remembered()`) of a backend whose watcher this replica takes over. */
  restore(backend: string, remembered: TransitionsState): void;
  /** Whether an append of the backend's changes is queued or running (not yet in the log, nor failed). */
  appending(backend: string): boolean;
  /** When the backend's last append settled (appended or failed; Unix ms), 0 before any. */
  appendsSettledAt(backend: string): number;
  /** A backend watched by another replica changed, as this replica's log reader saw it (the tracker's watched operations). */
  observed(backend: string, deltas: readonly VolumeDelta[]): void;
}

/** Follows the watchers this replica runs besides the log (the volume doctor); must not throw. */
export interface WatchObserver {
  deltas(backend: string, deltas: readonly VolumeDelta[]): void;
}

export interface WatcherSource {
  /**
   * Whether the log must also carry view-only changes (a volume that changed with no event), for
   * other replicas' views. @default false
   */
  readonly carriesViews?: boolean;
  /** Starts watching the backends; answers why each backend it cannot watch cannot. */
  start(backends: readonly VolumeBackend[], host: WatcherHost): Map<string, string>;
  /**
   * Whether the log must also carry the feed's memory of each backend's transitions, so that a
   * replica taking a watcher over folds as the old holder did. @default false
   */
  readonly keepsTransitions?: boolean;
  /**
   * What an append of a backend's changes must carry (a lease's fence, and `remembered`, the feed's
   * transitions memory as JSON, when {@link keepsTransitions}); undefined: nothing.
   * @throws LeaseLostError when this replica's lease of the backend lapsed (nothing may be written)
   */
  appendOptions(backend: string, remembered?: string): AppendOptions | undefined;
  /**
   * An append of a backend's changes failed (Redis did not answer, or refused it): the log lacks
   * what the watcher saw, so the source must make it whole (the holder compares its watcher with
   * the log's view and appends the difference). @default nothing
   */
  appendFailed?(backend: string, err: unknown): void;
  /** The backend has no append queued or running any more ({@link WatcherHost.appending}). @default nothing */
  appendsSettled?(backend: string): void;
  /** Stops every watcher it started. */
  stop(): Promise<void>;
}

/**
 * Creates the backend's watcher with the feed's options; a backend that cannot watch is recorded in
 * `unavailable` with the reason, and answers null.
 */
export function createWatcherOf(
  b: VolumeBackend,
  host: WatcherHost,
  unavailable: Map<string, string>,
): VolumeWatcher | null {
  if (!b.watching) {
    unavailable.set(b.id, `backend "${b.id}" has no watcher`);
    return null;
  }
  const w = b.watching.createWatcher(host.options(b.id));
  if ('unavailable' in w) {
    unavailable.set(b.id, w.unavailable);
    return null;
  }
  return w;
}

/** One watcher per watchable backend, in this process. */
export class LocalWatchers implements WatcherSource {
  readonly #running: VolumeWatcher[] = [];

  start(backends: readonly VolumeBackend[], host: WatcherHost): Map<string, string> {
    const unavailable = new Map<string, string>();
    for (const b of backends) {
      const w = createWatcherOf(b, host, unavailable);
      if (!w) continue;
      host.register(b.id, w);
      this.#running.push(w);
      w.start();
    }
    return unavailable;
  }

  appendOptions(): undefined {
    return undefined;
  }

  async stop(): Promise<void> {
    await Promise.all(this.#running.map((w) => w.stop()));
  }
}
