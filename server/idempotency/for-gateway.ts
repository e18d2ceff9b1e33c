/** The gateway's idempotency store: in Redis when replicas share it, so a retry on another replica finds the first result; else in the process. */
import type { Logger } from '../logger';
import type { GatewayRedis } from '../redis';
import { RedisIdempotencyStore } from './redis-store';
import type { IdempotencyStore } from '../../domain/idempotency';
import { InProcessIdempotencyStore } from './store';

/** @param redis the shared connection (scale-out). @default none: keys in this process's memory */
export function createIdempotencyStore(logger: Logger, redis?: GatewayRedis): IdempotencyStore {
  if (!redis) return new InProcessIdempotencyStore();
  return new RedisIdempotencyStore({
    client: redis.client,
    keyPrefix: redis.keyPrefix,
    onError: (op, err) =>
      logger.warn({ op, err: err instanceof Error ? err.message : String(err) }, 'redis idempotency store failed'),
    onRecovery: (r) =>
      logger.warn(
        { restored: r.restored, refusingUntil: r.refusingUntil.toISOString() },
        'redis lost its data: idempotency keys this replica holds were written back; creates with other keys are refused until then',
      ),
  });
}
