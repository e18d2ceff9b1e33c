/** The refusal of a keyed create while the shared idempotency store recovers from lost data. */
import { BackendUnavailableError } from '../../adapters/contract/errors';

/**
 * Redis lost its data (restarted without persistence, or flushed): a key another replica held
 * may not be back yet, so a create with a key this replica does not hold could run twice. It is
 * refused (`BACKEND_UNAVAILABLE`, retryable, `retryAfterSeconds`) until the window ends; creates
 * without a key go on.
 */
export class IdempotencyRecoveringError extends BackendUnavailableError {
  /** @param retryAfterSeconds whole seconds until the refusal window ends (at least 1). */
  constructor(readonly retryAfterSeconds: number) {
    super(
      `idempotency keys are recovering: the shared store (Redis) lost its data and replicas are writing back the keys they hold; a create with a new key is refused for ${retryAfterSeconds} s more so that no create runs twice; retry with the same key then, or send no key`,
    );
  }

  override toExtensions(): Record<string, unknown> {
    return { ...super.toExtensions(), retryAfterSeconds: this.retryAfterSeconds };
  }
}
