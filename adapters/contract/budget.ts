/**
 * The backend-call budget of one execution (like Apollo Connectors'
 * `max_requests_per_operation_per_source`). It lives in the execution context and travels with
 * every call's options, so it holds under any transport or executor. The transport takes one
 * unit per HTTP request it sends, retries included; the gateway's own calls (probes, watchers,
 * operation pollers) carry no budget.
 */
import { RequestLimitExceededError } from './errors';

export class CallBudget {
  readonly #used = new Map<string, number>();

  /** @param perBackend most HTTP calls one execution may send to each backend. */
  constructor(readonly perBackend: number) {}

  /**
   * Accounts for one call to `backend`.
   * @throws RequestLimitExceededError when the backend's budget is spent (nothing is sent then).
   */
  take(backend: string): void {
    const used = this.#used.get(backend) ?? 0;
    if (used >= this.perBackend) throw new RequestLimitExceededError(backend, this.perBackend);
    this.#used.set(backend, used + 1);
  }
}
