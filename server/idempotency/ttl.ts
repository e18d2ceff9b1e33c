/** How long idempotency keys are held (shared by `index.ts` and the stores). */

/** How long a key is remembered after its create finished. */
export const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000;

/**
 * How long a claim holds a key while its create runs: longer than any request may run
 * (OPERATION_TIMEOUT_MS is at most 1 h), so only the claim of a replica that died mid-create
 * expires, instead of blocking the key with CONFLICT for a whole day.
 */
export const IDEMPOTENCY_CLAIM_TTL_MS = 60 * 60 * 1000;
