/** How long idempotency keys are held: the domain's rule (domain/idempotency.ts), which the stores follow. */
export { IDEMPOTENCY_CLAIM_TTL_MS, IDEMPOTENCY_TTL_MS } from '../../domain/idempotency';
