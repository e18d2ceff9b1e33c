/**
 * The watcher of a backend whose lease this replica holds: the backend's own watcher, with the
 * demand of every replica (shared-demand.ts) added to this one's.
 */
import type { Volume, VolumeRef } from '../../adapters/contract/model';
import type { VolumeWatcher, WatchDemand, WatcherStatus } from '../../adapters/contract/watch';
import { NO_DEMAND, sumDemand, type Nudge } from './shared-demand';

export class LeasedWatcher implements VolumeWatcher {
  readonly backend: string;
  #local: WatchDemand = NO_DEMAND;
  #remote: WatchDemand[] = [];

  constructor(readonly inner: VolumeWatcher) {
    this.backend = inner.backend;
  }

  start(): void {
    this.inner.start();
  }

  stop(): Promise<void> {
    return this.inner.stop();
  }

  get current(): boolean {
    return this.inner.current;
  }

  status(): WatcherStatus {
    return this.inner.status();
  }

  covers(scope: string): boolean {
    return this.inner.covers?.(scope) ?? true;
  }

  onlyScope(): string | null {
    return this.inner.onlyScope?.() ?? null;
  }

  volume(ref: VolumeRef): Volume | undefined {
    return this.inner.volume(ref);
  }

  volumes(): Volume[] {
    return this.inner.volumes();
  }

  /** This replica's demand. */
  setDemand(d: WatchDemand): void {
    this.#local = d;
    this.inner.setDemand(sumDemand([this.#local, ...this.#remote]));
  }

  /** The other replicas' demand and their new nudges. */
  setRemote(demands: readonly WatchDemand[], nudges: readonly Nudge[]): void {
    this.#remote = [...demands];
    this.inner.setDemand(sumDemand([this.#local, ...this.#remote]));
    for (const n of nudges) this.inner.nudge(n.refs, n.servers);
  }

  nudge(refs: readonly VolumeRef[], servers?: readonly string[]): void {
    this.inner.nudge(refs, servers);
  }
}
