/**
 * Subscriptions open per socket. A subscription takes its place once it is accepted and gives it
 * back when it ends, whichever way (complete, error, the stream's end, the socket's close); giving
 * back twice is harmless. The limits that span sockets (per address, per credential) are the live
 * hub's budget (subscriptions/live/budget.ts), which every transport shares.
 */
import { SubscriptionLimitError } from '../../subscriptions/live';

export class SocketQuota {
  readonly #open = new Set<string>();

  constructor(private readonly maxSubscriptionsPerSocket: number) {}

  get size(): number {
    return this.#open.size;
  }

  /** Takes a place for subscription `id`, or says that the socket is full. */
  acquire(id: string): SubscriptionLimitError | undefined {
    if (this.#open.size >= this.maxSubscriptionsPerSocket)
      return new SubscriptionLimitError('maxSubscriptionsPerSocket', this.maxSubscriptionsPerSocket);
    this.#open.add(id);
    return undefined;
  }

  release(id: string): void {
    this.#open.delete(id);
  }

  releaseAll(): void {
    this.#open.clear();
  }
}
