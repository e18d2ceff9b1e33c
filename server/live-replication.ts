/**
 * The live path across replicas (docs/scaling.md), built when `REDIS_URL` is set: the event log on
 * a Redis stream every replica reads, watcher leases so one replica watches each backend, and the
 * follower views, snapshots, published statuses and shared demand around them
 * (subscriptions/replication/). Without Redis the live hub keeps its in-process log and watchers.
 */
import { RedisEventLog } from '../subscriptions/events';
import { WatcherLeases } from '../subscriptions/leases';
import {
  ReplicatedWatchers,
  SharedDemand,
  ViewSnapshots,
  ProblemSnapshots,
  TransitionMemories,
  WatcherBoard,
  type Leases,
  type ReplicationStatus,
} from '../subscriptions/replication';
import type { LiveConfig } from './live-config';
import type { Logger } from './logger';
import { redisErrorText, type GatewayRedis } from './redis';

/** What the live hub is built with across replicas. */
export interface LiveReplication {
  /** This replica's id (leases, published statuses, `/readyz`). */
  readonly replica: string;
  readonly log: RedisEventLog;
  readonly watchers: ReplicatedWatchers;
  /** The volume doctor's open problems per backend, kept by each backend's lease holder. */
  readonly problems: ProblemSnapshots;
  /** For `/readyz`: the log reader, the leases held and each backend's role and view. */
  report(): Promise<ReplicationReport>;
}

/** The `replication` entry of `/readyz`. */
export interface ReplicationReport {
  replica: string;
  log: LogStatus;
  backends: ReplicationStatus[];
}

/** Longest `/readyz` and a scrape wait for the log's lag (one Redis call): they must answer while Redis hangs. */
const STATUS_WAIT_MS = 250;

type LogStatus = Awaited<ReturnType<RedisEventLog['status']>>;

/** The log's status, or after `ms` one that says Redis did not answer. */
async function within(p: Promise<LogStatus>, ms: number): Promise<LogStatus> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<LogStatus>((resolve) => {
    timer = setTimeout(
      () =>
        resolve({
          connected: false,
          caughtUp: false,
          logId: null,
          lastReadId: null,
          behind: null,
          oldestUnreadAgeMs: null,
          errors: 0,
          lastError: `Redis did not answer within ${ms} ms`,
          losses: 0,
        }),
      ms,
    );
  });
  try {
    return await Promise.race([p, late]);
  } finally {
    clearTimeout(timer);
  }
}

export function createLiveReplication(
  redis: GatewayRedis,
  c: LiveConfig,
  logger: Logger,
  replica: string,
): LiveReplication {
  const client = redis.client;
  const keyPrefix = redis.keyPrefix;
  const log = new RedisEventLog({
    client,
    keyPrefix,
    maxEvents: c.eventLogMaxEvents,
    retentionMs: c.eventLogRetentionMs,
    onError: (op, err) => logger.warn({ err: redisErrorText(err), op }, 'event log error'),
  });
  let changed: (backend: string, held: boolean) => void = () => {};
  const leases = new WatcherLeases({
    client,
    keyPrefix,
    replicaId: replica,
    ttlMs: c.leaseTtlMs,
    onChange: (backend, held, info) => {
      logger.info({ backend, held, reason: info.reason }, held ? 'watcher lease gained' : 'watcher lease lost');
      changed(backend, held);
    },
    onError: (backend, op, err) => logger.warn({ backend, op, err: redisErrorText(err) }, 'watcher lease error'),
  });
  const asLeases: Leases = {
    contend: (backends, onChange) => {
      changed = onChange;
      leases.contend([...backends]);
    },
    fence: (backend) => leases.fence(backend),
    release: () => leases.release(),
  };
  const watchers = new ReplicatedWatchers({
    replica,
    log,
    leases: asLeases,
    snapshots: new ViewSnapshots({ client, keyPrefix }),
    memories: new TransitionMemories({ client, keyPrefix }),
    board: new WatcherBoard({ client, keyPrefix, ttlMs: Math.max(3000, c.leaseTtlMs) }),
    demand: new SharedDemand({ client, keyPrefix }),
    snapshotEveryMs: c.snapshotEveryMs,
    following: () => log.readerCaughtUp,
    followingSince: (t) => log.readerCaughtUpSince(t),
    onError: (err) => logger.warn({ err: redisErrorText(err) }, 'live replication error'),
    onLost: (err) =>
      logger.warn({ err: err.message }, 'the shared event log was lost: live subscriptions end with CURSOR_EXPIRED'),
  });
  log.onPrimaryChanged((runId) => {
    logger.warn({ runId }, 'another Redis primary answers (a failover): rebuilding the follower views from Redis');
    watchers.primaryChanged();
  });
  return {
    replica,
    log,
    watchers,
    problems: new ProblemSnapshots({ client, keyPrefix, fence: (backend) => leases.fence(backend) }),
    report: async () => ({ replica, log: await within(log.status(), STATUS_WAIT_MS), backends: watchers.statuses() }),
  };
}
