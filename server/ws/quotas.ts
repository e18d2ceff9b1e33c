/**
 * Subscriptions open per socket and per credential set (across sockets). A subscription takes its
 * place once it is accepted and gives it back when it ends, whichever way (complete, error, the
 * stream's end, the socket's close); giving back twice is harmless.
 */
import { SubscriptionLimitError } from './errors';

export interface QuotaLimits {
  maxSubscriptionsPerSocket: number;
  maxSubscriptionsPerCredential: number;
}

export class SubscriptionQuotas {
  readonly #perCredential = new Map<string, number>();

  constructor(readonly limits: QuotaLimits) {}

  /** The ledger of one socket whose caller has `credentialKey`. */
  socket(credentialKey: string): SocketQuota {
    return new SocketQuota(this, credentialKey);
  }

  /** @internal */
  take(key: string): boolean {
    const n = this.#perCredential.get(key) ?? 0;
    if (n >= this.limits.maxSubscriptionsPerCredential) return false;
    this.#perCredential.set(key, n + 1);
    return true;
  }

  /** @internal */
  give(key: string): void {
    const n = (this.#perCredential.get(key) ?? 1) - 1;
    if (n <= 0) this.#perCredential.delete(key);
    else this.#perCredential.set(key, n);
  }

  /** Subscriptions open with `credentialKey` (tests, metrics). */
  openFor(credentialKey: string): number {
    return this.#perCredential.get(credentialKey) ?? 0;
  }
}

export class SocketQuota {
  readonly #open = new Set<string>();

  constructor(
    private readonly quotas: SubscriptionQuotas,
    private readonly key: string,
  ) {}

  get size(): number {
    return this.#open.size;
  }

  /** Takes a place for subscription `id`, or says which limit is full. */
  acquire(id: string): SubscriptionLimitError | undefined {
    const l = this.quotas.limits;
    if (this.#open.size >= l.maxSubscriptionsPerSocket) return new SubscriptionLimitError('maxSubscriptionsPerSocket', l.maxSubscriptionsPerSocket);
    if (!this.quotas.take(this.key)) return new SubscriptionLimitError('maxSubscriptionsPerCredential', l.maxSubscriptionsPerCredential);
    this.#open.add(id);
    return undefined;
  }

  release(id: string): void {
    if (this.#open.delete(id)) this.quotas.give(this.key);
  }

  releaseAll(): void {
    for (const id of [...this.#open]) this.release(id);
  }
}
