/**
 * The subscription budget every subscription transport draws from (graphql-ws now; SSE or multipart
 * later call the same hub): per client address, how many subscriptions are open and how many bytes
 * of client-chosen text they keep (id, query, variables, operation name); per credential key, how
 * many are open; and per address, how many credential checks its subscriptions' starts may send
 * (a token bucket: the start checks each credential with its backend unless the access cache
 * knows it). A place is taken before a subscription starts and given back once when it ends.
 * docs/subscriptions.md ("What one address can hold") gives the sums.
 */
import { ErrorCode, GatewayError } from '../../adapters/contract/errors';
import { CallerLimiter } from '../../domain/caller-limiter';

/** Which limit refused a subscription (`extensions.limit`). */
export type SubscriptionLimit =
  | 'maxSubscriptionsPerSocket'
  | 'maxSubscriptionsPerCredential'
  | 'maxSubscriptionsPerAddress'
  | 'maxSubscriptionBytesPerAddress'
  | 'maxSubscriptionBytes'
  | 'maxStartChecksPerAddress';

const WHOSE: Record<SubscriptionLimit, [whose: string, setting: string]> = {
  maxSubscriptionsPerSocket: ['this socket already has {max} subscriptions open', 'WS_MAX_SUBSCRIPTIONS_PER_SOCKET'],
  maxSubscriptionsPerCredential: [
    'these credentials (across sockets) already have {max} subscriptions open',
    'WS_MAX_SUBSCRIPTIONS_PER_CREDENTIAL',
  ],
  maxSubscriptionsPerAddress: [
    'this client address (across sockets) already has {max} subscriptions open',
    'LIVE_MAX_SUBSCRIPTIONS_PER_ADDRESS',
  ],
  maxSubscriptionBytesPerAddress: [
    'the subscriptions of this client address would keep more than {max} bytes of id, query and variables',
    'LIVE_MAX_SUBSCRIPTION_BYTES_PER_ADDRESS',
  ],
  maxSubscriptionBytes: [
    "this subscription's id, query, variables and operation name are over {max} bytes",
    'LIVE_MAX_SUBSCRIPTION_BYTES',
  ],
  maxStartChecksPerAddress: [
    'this client address has sent {max} credential checks in the last 10 s',
    'LIVE_MAX_START_CHECKS_PER_ADDRESS',
  ],
};

/** A subscription over one of the budget's limits (the socket, if any, stays open). */
export class SubscriptionLimitError extends GatewayError {
  constructor(
    readonly limit: SubscriptionLimit,
    readonly max: number,
    /** Set when waiting is the remedy (the start-check rate). */
    readonly retryAfterSeconds?: number,
  ) {
    const [whose, setting] = WHOSE[limit];
    super(
      ErrorCode.SubscriptionLimit,
      `${whose.replace('{max}', String(max))} (${setting}): ${retryAfterSeconds === undefined ? 'complete one first' : `retry after ${retryAfterSeconds} s`}`,
    );
  }

  override toExtensions(): Record<string, unknown> {
    return {
      ...super.toExtensions(),
      limit: this.limit,
      max: this.max,
      ...(this.retryAfterSeconds === undefined ? {} : { retryAfterSeconds: this.retryAfterSeconds }),
    };
  }
}

/** Limits of {@link SubscriptionBudget}. */
export interface SubscriptionBudgetLimits {
  /** Subscriptions open at once from one client address (IPv6 by /64), every socket and transport. @default 1000 */
  maxPerAddress: number;
  /** Bytes of client-chosen text (id, query, variables, operation name) kept by one address's open subscriptions. @default 4194304 */
  maxBytesPerAddress: number;
  /** Bytes of client-chosen text one subscription may keep. @default 16384 */
  maxBytesPerSubscription: number;
  /** Subscriptions open at once with the same credential key (see the hub: the credentials that proved valid). @default 500 */
  maxPerCredential: number;
  /** Credential checks one address's subscription starts may send per 10 s (a bucket of this size, refilled evenly); cache hits are free. @default 100 */
  maxStartChecksPerAddress: number;
}

export const BUDGET_DEFAULTS: Readonly<SubscriptionBudgetLimits> = Object.freeze({
  maxPerAddress: 1000,
  maxBytesPerAddress: 4_194_304,
  maxBytesPerSubscription: 16_384,
  maxPerCredential: 500,
  maxStartChecksPerAddress: 100,
});

const OFF = { requestsPerSecond: 0, burst: 0, maxInFlight: 0 };

/** A place taken; `release()` gives it back (once, however often it is called). */
export interface Place {
  release(): void;
}

interface Usage {
  count: number;
  bytes: number;
}

export class SubscriptionBudget {
  readonly #byAddress = new Map<string, Usage>();
  readonly #byCredential = new Map<string, number>();
  readonly #checks: CallerLimiter;

  constructor(readonly limits: SubscriptionBudgetLimits = BUDGET_DEFAULTS) {
    const n = limits.maxStartChecksPerAddress;
    this.#checks = new CallerLimiter({
      caller: OFF,
      address: { requestsPerSecond: n / 10, burst: n, maxInFlight: 0 },
      maxTracked: 10_000,
    });
  }

  /** Charges one credential check to `address`, or says when it may send the next. */
  admitCheck(address: string): SubscriptionLimitError | undefined {
    const a = this.#checks.admit({ callerKey: '', addressKey: address });
    if (!a.ok)
      return new SubscriptionLimitError(
        'maxStartChecksPerAddress',
        this.limits.maxStartChecksPerAddress,
        a.retryAfterSeconds,
      );
    a.release();
    return undefined;
  }

  /** A place for one subscription of `address` keeping `bytes` of client text, or the limit it is over. */
  admitAddress(address: string, bytes: number): Place | SubscriptionLimitError {
    const l = this.limits;
    if (bytes > l.maxBytesPerSubscription)
      return new SubscriptionLimitError('maxSubscriptionBytes', l.maxBytesPerSubscription);
    const u = this.#byAddress.get(address) ?? { count: 0, bytes: 0 };
    if (u.count >= l.maxPerAddress) return new SubscriptionLimitError('maxSubscriptionsPerAddress', l.maxPerAddress);
    if (u.bytes + bytes > l.maxBytesPerAddress)
      return new SubscriptionLimitError('maxSubscriptionBytesPerAddress', l.maxBytesPerAddress);
    u.count++;
    u.bytes += bytes;
    this.#byAddress.set(address, u);
    return new AddressPlace(this.#byAddress, address, u, bytes);
  }

  /** A place under credential key `key`, or the limit it is over. */
  admitCredential(key: string): Place | SubscriptionLimitError {
    const n = this.#byCredential.get(key) ?? 0;
    if (n >= this.limits.maxPerCredential)
      return new SubscriptionLimitError('maxSubscriptionsPerCredential', this.limits.maxPerCredential);
    this.#byCredential.set(key, n + 1);
    return new CredentialPlace(this.#byCredential, key);
  }
}

// Places are class instances, not closures: one is held per open subscription, and a closure pair
// with its context costs about three times the bytes (bench/heap.ts).
class AddressPlace implements Place {
  #held = true;
  constructor(
    private readonly byAddress: Map<string, Usage>,
    private readonly address: string,
    private readonly usage: Usage,
    private readonly bytes: number,
  ) {}

  release(): void {
    if (!this.#held) return;
    this.#held = false;
    this.usage.count--;
    this.usage.bytes -= this.bytes;
    if (this.usage.count === 0) this.byAddress.delete(this.address);
  }
}

class CredentialPlace implements Place {
  #held = true;
  constructor(
    private readonly byCredential: Map<string, number>,
    private readonly key: string,
  ) {}

  release(): void {
    if (!this.#held) return;
    this.#held = false;
    const left = (this.byCredential.get(this.key) ?? 1) - 1;
    if (left <= 0) this.byCredential.delete(this.key);
    else this.byCredential.set(this.key, left);
  }
}

/** The places one subscription holds, given back together (once, however often `release` is called). */
export class Places implements Place {
  #held: Place[] | undefined = [];

  /** Holds `p`, or throws the limit it is over (the hub answers it as an error result). */
  take(p: Place | SubscriptionLimitError): void {
    if (p instanceof SubscriptionLimitError) throw p;
    if (this.#held) this.#held.push(p);
    else p.release();
  }

  release(): void {
    const held = this.#held;
    this.#held = undefined;
    if (held) for (const p of held) p.release();
  }
}
