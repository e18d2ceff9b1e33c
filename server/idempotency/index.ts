/**
 * Where idempotency keys are remembered: in the process, or in Redis so every replica answers a retry.
 * The rule that uses them (claim, replay, CONFLICT, IDEMPOTENCY_KEY_REUSED) is the domain's
 * (`domain/idempotency.ts`); docs/schema.md describes it to clients.
 */
export { InProcessIdempotencyStore, type InProcessIdempotencyStoreOptions } from './store';
export { RedisIdempotencyStore, type IdempotencyRecovery, type RedisIdempotencyStoreOptions } from './redis-store';
export { IdempotencyRecoveringError } from './errors';
