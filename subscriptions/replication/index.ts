/** The live path across replicas (docs/scaling.md): leases decide who watches, the shared log tells everyone. */
export { FollowerView } from './follower-view';
export { FollowerWatcher } from './follower-watcher';
export { LeasedWatcher } from './leased-watcher';
export { ReplicatedWatchers } from './replicated-watchers';
export {
  REPLICATION_DEFAULTS,
  type Leases,
  type ReplicatedWatchersOptions,
  type ReplicationStatus,
} from './replication-options';
export { takeoverDeltas } from './takeover';
export { SharedDemand, sumDemand, type ReplicaDemand } from './shared-demand';
export { ViewSnapshots, type ViewSnapshot } from './snapshots';
export { ProblemSnapshots, type ProblemSnapshotsOptions } from './problem-snapshots';
export { TransitionMemories } from './transition-memories';
export { ViewFollower } from './view-follower';
export { WatcherBoard, type PublishedWatcher } from './watcher-board';
