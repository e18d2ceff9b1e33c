/** The options and statuses of the replicated watcher source (replicated-watchers.ts). */
import type { EventLog } from '../events/log';
import type { SharedDemand } from './shared-demand';
import type { ViewSnapshots } from './snapshots';
import type { TransitionMemories } from './transition-memories';
import type { WatcherBoard } from './watcher-board';

/** The watcher leases, as this module uses them (subscriptions/leases/). */
export interface Leases {
  /** Starts contending for `backends`; `changed` hears when this replica gains or loses one. */
  contend(backends: readonly string[], changed: (backend: string, held: boolean) => void): void;
  /** The fence an append of the backend's changes carries; null when this replica does not hold it. */
  fence(backend: string): { key: string; token: string } | null;
  /** Releases every lease held (shutdown: the next holder takes over at once). Never rejects. */
  release(): Promise<void>;
}

/** Options of {@link ReplicatedWatchers}. */
export interface ReplicatedWatchersOptions {
  /** This replica's id (in leases, published statuses and demand). */
  replica: string;
  log: EventLog;
  leases: Leases;
  snapshots: ViewSnapshots;
  /** Where the holder's transitions memory of each backend is kept (written with its appends). */
  memories: TransitionMemories;
  board: WatcherBoard;
  demand: SharedDemand;
  /** How often the holder writes a backend's view snapshot while it changes, in ms. @default 30000 */
  snapshotEveryMs?: number;
  /** How often statuses and demand are published and read, in ms. @default 1000 */
  publishEveryMs?: number;
  /** Whether this replica's log reader is connected. @default always */
  following?: () => boolean;
  /**
   * Whether this replica's log reader has delivered everything appended before `t` (ms): a new
   * holder compares its first read with the view only then, so the old holder's last appends are
   * in the view, not sent again. @default always
   */
  followingSince?: (t: number) => boolean;
  /** Redis or replay trouble (logged). */
  onError?: (err: unknown) => void;
  /** The shared log was lost (Redis restarted empty or flushed): live subscriptions must end. */
  onLost?: (err: Error) => void;
}

/** One backend's replication state, for `/readyz`. */
export interface ReplicationStatus {
  backend: string;
  /** HOLDER: this replica runs the watcher; FOLLOWER: another one does (or none yet). */
  role: 'HOLDER' | 'FOLLOWER';
  /** The replica that runs the watcher, as published; null when none does. */
  holder: string | null;
  /** Whether this replica's follower view of the backend is complete (loaded and followed). */
  viewComplete: boolean;
  viewVolumes: number;
}

/** Defaults of {@link ReplicatedWatchersOptions}; the gateway's `LIVE_SNAPSHOT_EVERY_MS` takes its default from here. */
export const REPLICATION_DEFAULTS = Object.freeze({ snapshotEveryMs: 30_000, publishEveryMs: 1000 });
