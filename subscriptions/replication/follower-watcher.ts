/**
 * A backend's watcher on a replica that does not hold its lease: the follower view (what the log
 * said) answers for the volumes, the holder's published status (watcher-board.ts) for the state,
 * lag and scopes. Demand and nudges go to the holder through Redis (shared-demand.ts). It is
 * current only while the holder's watcher is current and this replica's view of the backend is
 * complete and not catching up.
 */
import type { Volume, VolumeRef } from '../../adapters/contract/model';
import type { VolumeWatcher, WatchDemand, WatcherStatus } from '../../adapters/contract/watch';
import type { FollowerView } from './follower-view';
import type { PublishedWatcher } from './watcher-board';

/** What a {@link FollowerWatcher} reads and where it sends demand. */
export interface FollowerWatcherDeps {
  view: FollowerView;
  /** The holder's watcher as last read from Redis; null when no replica publishes one. */
  published: () => PublishedWatcher | null;
  /** Whether this replica's view of the backend is being rebuilt from a snapshot now. */
  catchingUp: () => boolean;
  /** Whether this replica's log reader is connected: a view it cannot follow is not current. */
  following: () => boolean;
  demand: (d: WatchDemand) => void;
  nudge: (refs: readonly VolumeRef[], servers: readonly string[]) => void;
}

export class FollowerWatcher implements VolumeWatcher {
  constructor(
    readonly backend: string,
    readonly deps: FollowerWatcherDeps,
  ) {}

  /** Nothing to start: the replica's log reader keeps the view. */
  start(): void {}

  async stop(): Promise<void> {}

  get #ready(): boolean {
    return this.deps.view.complete(this.backend) && !this.deps.catchingUp();
  }

  get current(): boolean {
    const p = this.deps.published();
    return p !== null && p.current && this.#ready && this.deps.following();
  }

  status(): WatcherStatus {
    const p = this.deps.published();
    const volumes = this.deps.view.size(this.backend);
    if (!p)
      return {
        backend: this.backend,
        state: 'STARTING',
        source: 'EVENT_STREAM',
        volumes,
        currentAt: null,
        lagMs: null,
        message: 'no replica runs this backend’s watcher yet (its lease is free or being taken over)',
      };
    const view = this.#ready ? '' : '; this replica’s view is being rebuilt from a snapshot';
    return {
      ...p.status,
      // Until the view is complete this replica cannot answer from it: a new subscription waits for
      // it as for a watcher reading its first view (bounded by LIVE_WATCHER_WAIT_MS).
      state: this.#ready || p.status.state === 'DEGRADED' ? p.status.state : 'STARTING',
      volumes,
      message: `watched by replica ${p.replica}${p.status.message ? `: ${p.status.message}` : ''}${view}`,
    };
  }

  covers(scope: string): boolean {
    const p = this.deps.published();
    return p !== null && p.status.currentAt !== null && (p.onlyScope === null || p.onlyScope === scope);
  }

  onlyScope(): string | null {
    return this.deps.published()?.onlyScope ?? null;
  }

  volume(ref: VolumeRef): Volume | undefined {
    return this.#ready ? this.deps.view.volume(ref) : undefined;
  }

  volumes(): Volume[] {
    return this.deps.view.volumes(this.backend);
  }

  setDemand(d: WatchDemand): void {
    this.deps.demand(d);
  }

  nudge(refs: readonly VolumeRef[], servers: readonly string[] = []): void {
    this.deps.nudge(refs, servers);
  }
}
