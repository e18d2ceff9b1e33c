/**
 * Per-caller rate and concurrency limits: a token bucket (rate + burst) and an in-flight cap for
 * each caller key, and the same again, larger, for each client address (see
 * server/http/caller-identity.ts for the keys and why both). Transport-neutral, so it sits with the
 * execution's own limits (execution-limits.ts) rather than in one transport: the HTTP edge admits
 * each request with it (and answers a refusal as its 429), and the live hub's subscription budget
 * rates start checks per address with its address tier (subscriptions/live/budget.ts).
 *
 * Memory is bounded: a caller whose bucket has refilled and who has nothing in flight is the same
 * as an unknown one, so it is dropped by a sweep every {@link SWEEP_MS}; past `maxTracked`
 * entries the least recently seen idle ones are evicted first.
 */

/** Which per-caller limit refused a request. */
export type RateLimitKind = 'requestRate' | 'concurrentRequests';
/** Whose budget it was: the caller's (credential fingerprint, or address when anonymous) or its address's (all callers from it). */
export type RateLimitScope = 'caller' | 'address';

/** One tier's limits; 0 turns that limit off. Defaults: `HTTP_SETTINGS.rateLimit` (server/http/config.ts). */
export interface LimitTier {
  /** Sustained requests per second (token bucket refill rate). */
  requestsPerSecond: number;
  /** Requests that may arrive at once above the rate (bucket size). */
  burst: number;
  /** Requests that may be in flight at once. */
  maxInFlight: number;
}

export interface CallerLimiterOptions {
  /** Limits of one caller key. */
  caller: LimitTier;
  /** Limits of one client address, across all its callers. */
  address: LimitTier;
  /** Most keys tracked at once (both tiers together). */
  maxTracked: number;
  /** Clock in milliseconds. @default Date.now */
  now?: () => number;
}

/** Why {@link CallerLimiter.admit} refused: which limit, whose, and when to retry. */
export interface RateLimitRefusal {
  ok: false;
  limit: RateLimitKind;
  scope: RateLimitScope;
  /** Whole seconds until the limit would admit the request (at least 1). */
  retryAfterSeconds: number;
}

/**
 * The result of {@link CallerLimiter.admit}: a release to call once, when the request is done (or
 * a refund, when the request is refused after all and must cost nothing), or the refusal.
 */
export type Admission = { ok: true; release: () => void; refund: () => void } | RateLimitRefusal;

interface Bucket {
  tokens: number;
  at: number;
  inFlight: number;
}

/** How often idle, refilled entries are dropped. */
const SWEEP_MS = 10_000;

export class CallerLimiter {
  readonly #o: CallerLimiterOptions;
  readonly #now: () => number;
  /** Insertion order = least recently seen first (entries are re-inserted when seen). */
  readonly #buckets = new Map<string, Bucket>();
  #lastSweep: number;

  constructor(options: CallerLimiterOptions) {
    this.#o = options;
    this.#now = options.now ?? Date.now;
    this.#lastSweep = this.#now();
  }

  /** Keys currently tracked (for tests and metrics). */
  get size(): number {
    return this.#buckets.size;
  }

  /**
   * Admits a request of `id` or says which limit refuses it. A refused request is charged nothing.
   * @param weight how many requests it counts as, against the rate and the in-flight cap alike (an
   *   HTTP batch counts its operations); one heavier than a tier's burst is always refused
   */
  admit(id: { callerKey: string; addressKey: string }, weight = 1): Admission {
    const now = this.#now();
    if (now - this.#lastSweep >= SWEEP_MS) this.#sweep(now);
    const tiers: Array<[RateLimitScope, LimitTier, Bucket]> = [
      ['caller', this.#o.caller, this.#bucket(`c|${id.callerKey}`, this.#o.caller, now)],
      ['address', this.#o.address, this.#bucket(`a|${id.addressKey}`, this.#o.address, now)],
    ];
    for (const [scope, tier, b] of tiers) {
      if (tier.maxInFlight > 0 && b.inFlight + weight > tier.maxInFlight)
        return { ok: false, limit: 'concurrentRequests', scope, retryAfterSeconds: 1 };
    }
    for (const [scope, tier, b] of tiers) {
      if (tier.requestsPerSecond > 0 && b.tokens < weight)
        return {
          ok: false,
          limit: 'requestRate',
          scope,
          retryAfterSeconds: Math.max(1, Math.ceil((weight - b.tokens) / tier.requestsPerSecond)),
        };
    }
    for (const [, tier, b] of tiers) {
      if (tier.requestsPerSecond > 0) b.tokens -= weight;
      b.inFlight += weight;
    }
    let released = false;
    const release = (): void => {
      if (released) return;
      released = true;
      for (const [, , b] of tiers) b.inFlight -= weight;
    };
    const refund = (): void => {
      if (released) return;
      release();
      for (const [, tier, b] of tiers)
        if (tier.requestsPerSecond > 0) b.tokens = Math.min(tier.burst, b.tokens + weight);
    };
    return { ok: true, release, refund };
  }

  #bucket(key: string, tier: LimitTier, now: number): Bucket {
    let b = this.#buckets.get(key);
    if (b) {
      this.#buckets.delete(key);
      b.tokens = Math.min(tier.burst, b.tokens + ((now - b.at) / 1000) * tier.requestsPerSecond);
      b.at = now;
    } else {
      if (this.#buckets.size >= this.#o.maxTracked) this.#evict();
      b = { tokens: tier.burst, at: now, inFlight: 0 };
    }
    this.#buckets.set(key, b);
    return b;
  }

  /** Drops entries that are indistinguishable from new ones: nothing in flight, bucket full again. */
  #sweep(now: number): void {
    this.#lastSweep = now;
    for (const [key, b] of this.#buckets) {
      const tier = key.startsWith('c|') ? this.#o.caller : this.#o.address;
      const full =
        tier.requestsPerSecond <= 0 || b.tokens + ((now - b.at) / 1000) * tier.requestsPerSecond >= tier.burst;
      if (b.inFlight === 0 && full) this.#buckets.delete(key);
    }
  }

  /** Makes room for one entry: the least recently seen idle one, else the least recently seen. */
  #evict(): void {
    let scanned = 0;
    for (const [key, b] of this.#buckets) {
      // Bounded scan: a table full of busy callers must not cost a full pass per request.
      if (b.inFlight === 0 || ++scanned > 64) {
        this.#buckets.delete(key);
        return;
      }
    }
  }
}
