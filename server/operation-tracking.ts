/**
 * The gateway's operation tracker: records kept in Redis when replicas share it (else in the process),
 * with their changes followed and a lost replica's operations finished by the others,
 * completion rules evaluated by the backend that made the change, watched operations decided by
 * the watcher directory, and every state change counted in the metrics and a finished one logged.
 */
import type { WatchedScopes } from '../subscriptions/operations';
import {
  OperationTracker,
  RedisOperationReplication,
  RedisOperationStore,
  type RedisOperationReplicationOptions,
  TERMINAL,
  type OperationTrackerOptions,
} from '../subscriptions/operations';
import type { Logger } from './logger';
import type { GatewayMetrics } from './metrics';
import type { GatewayRedis } from './redis';
import type { BackendRegistry } from '../domain/registry';

/** What {@link createOperationTracker} builds the tracker with. */
export interface OperationTrackingOptions {
  registry: BackendRegistry;
  /** Decides which operations are checked with the service credential (domain/watchers.ts). */
  watchers: WatchedScopes;
  metrics: GatewayMetrics;
  logger: Logger;
  /** Shared records (scale-out). @default none: records in this process's memory */
  redis?: GatewayRedis;
  /** Poll settings. @default the tracker's (250 ms backing off to 2 s, 120 s deadline) */
  poll?: Pick<OperationTrackerOptions, 'pollMs' | 'maxPollMs' | 'defaultTimeoutMs'>;
  /**
   * With `redis`: which replica takes over the watched operations of a lost replica, and the
   * hand-over's timing. @default every replica with a current watcher may; liveness TTL 10 s, sweep every 2 s
   */
  replication?: Pick<RedisOperationReplicationOptions, 'isLeaseHolder' | 'replicaTtlMs' | 'sweepMs'>;
  /** This replica's id in Redis (the leases and the live path use the same one). */
  replica: string;
}

const message = (err: unknown): string => (err instanceof Error ? err.message : String(err));

export function createOperationTracker(o: OperationTrackingOptions): OperationTracker {
  const { metrics, logger } = o;
  const store = o.redis
    ? new RedisOperationStore({
        client: o.redis.client,
        keyPrefix: o.redis.keyPrefix,
        replica: o.replica,
        onError: (op, err) =>
          logger.warn({ op, err: message(err) }, "redis operation store failed; using this replica's copy"),
      })
    : undefined;
  return new OperationTracker({
    ...o.poll,
    watchers: o.watchers,
    // The backend that made a change evaluates its completion rule.
    changes: (id) => o.registry.find(id)?.trackedChanges,
    store,
    replication:
      o.redis && store
        ? new RedisOperationReplication({
            ...o.replication,
            client: o.redis.client,
            store,
            // Redis trouble is logged by the connection itself; these are debug detail.
            onError: (what, err) => logger.debug({ what, err: message(err) }, 'redis operation sharing failed'),
            onHandover: (r, outcome, lost) =>
              logger.warn(
                { operation: r.id, kind: r.kind, backend: r.backend, lostReplica: lost, outcome },
                outcome === 'adopted'
                  ? 'took over an operation whose replica was lost'
                  : 'timed out an operation whose replica was lost',
              ),
          })
        : undefined,
    onChange: (r, previous) => {
      if (previous === r.state) return;
      metrics.trackedOperations.inc({ kind: r.kind, state: r.state });
      if (previous === null && !TERMINAL.has(r.state)) metrics.trackedOperationsActive.inc({ kind: r.kind });
      if (previous !== null && !TERMINAL.has(previous) && TERMINAL.has(r.state))
        metrics.trackedOperationsActive.dec({ kind: r.kind });
      if (TERMINAL.has(r.state))
        logger.info(
          {
            operation: r.id,
            kind: r.kind,
            backend: r.backend,
            state: r.state,
            failureReason: r.failureReason ?? undefined,
          },
          'operation finished',
        );
    },
    onRelease: (r) => {
      metrics.trackedOperationsActive.dec({ kind: r.kind });
      logger.warn(
        { operation: r.id, kind: r.kind, backend: r.backend, state: r.state },
        'another replica took over an operation this replica drove; this replica stops driving it',
      );
    },
    onCheckError: (r, err) =>
      logger.warn({ operation: r.id, kind: r.kind, backend: r.backend, err: message(err) }, 'operation check failed'),
  });
}
