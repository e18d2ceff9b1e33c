/**
 * The gateway's operation tracker: records kept in Redis when replicas share it (else in the process),
 * completion rules evaluated by the backend that made the change, watched operations decided by
 * the watcher directory, and every state change counted in the metrics and a finished one logged.
 */
import type { WatchedScopes } from '../subscriptions/operations';
import {
  OperationTracker,
  RedisOperationStore,
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
}

const message = (err: unknown): string => (err instanceof Error ? err.message : String(err));

export function createOperationTracker(o: OperationTrackingOptions): OperationTracker {
  const { metrics, logger } = o;
  return new OperationTracker({
    ...o.poll,
    watchers: o.watchers,
    // The backend that made a change evaluates its completion rule.
    changes: (id) => o.registry.find(id)?.trackedChanges,
    store: o.redis
      ? new RedisOperationStore({
          client: o.redis.client,
          keyPrefix: o.redis.keyPrefix,
          onError: (op, err) =>
            logger.warn({ op, err: message(err) }, "redis operation store failed; using this replica's copy"),
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
    onCheckError: (r, err) =>
      logger.warn({ operation: r.id, kind: r.kind, backend: r.backend, err: message(err) }, 'operation check failed'),
  });
}
