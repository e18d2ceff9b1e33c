/**
 * Circuit breakers, one per service endpoint of a backend (Nomad; Keystone, Cinder and Nova each),
 * so that a hung service costs its callers nothing once it is known to be hung, and a hung Nova
 * does not block Cinder lists.
 *
 * - Only connection errors, timeouts and 5xx answers count as failures; any other answer (4xx
 *   included: bad tokens, not found) is a success, so junk tokens cannot open a breaker for
 *   everyone. Calls the caller abandoned count as neither.
 * - CLOSED → OPEN after `failures` failures in a row, or when at least `minCalls` calls ended in
 *   the last `windowMs` and `failureRatePercent` of them failed.
 * - OPEN fails calls at once ({@link BreakerOpenError}) for `openMs`, doubled on every failed
 *   probe up to `maxOpenMs`. Then HALF_OPEN lets one call through: its outcome closes the breaker
 *   (and resets the open time) or opens it again.
 *
 * In the contract, not in `adapters/http/`: a module's factory gets the board ({@link BreakerBoard},
 * `BackendDeps` in module.ts), and a backend without HTTP (memory) uses it too. The transport
 * reports each call's outcome to it.
 */
import { BackendUnavailableError } from './errors';

/** What a breaker lets through. */
export type BreakerState = 'CLOSED' | 'OPEN' | 'HALF_OPEN';

/** When a breaker opens and for how long (docs/configuration.md "Circuit breakers"). */
export interface BreakerOptions {
  /** Failures in a row that open the breaker. @default 5 */
  failures: number;
  /** Share of failed calls in the window that opens the breaker, in percent. @default 50 */
  failureRatePercent: number;
  /** Fewest calls in the window before the rate counts. @default 10 */
  minCalls: number;
  /** Length of the sliding window the rate is taken over, ms. @default 30000 */
  windowMs: number;
  /** First open period, ms; doubles with each failed probe. @default 5000 */
  openMs: number;
  /** Longest open period, ms. @default 60000 */
  maxOpenMs: number;
}

export const BREAKER_DEFAULTS: Readonly<BreakerOptions> = Object.freeze({ failures: 5, failureRatePercent: 50, minCalls: 10, windowMs: 30_000, openMs: 5_000, maxOpenMs: 60_000 });

/** What `/readyz` and `/metrics` show of one breaker. */
export interface BreakerStatus {
  backend: string;
  /** `nomad`, `keystone`, `cinder` or `nova`. */
  service: string;
  state: BreakerState;
  /** Failures in a row now. */
  consecutiveFailures: number;
  /** When an open breaker lets a probe through (RFC 3339); null unless OPEN. */
  retryAt: string | null;
  /** Why it opened last, for humans; null while it never opened. */
  reason: string | null;
}

/** How a call through the breaker ended. */
export type CallOutcome = 'success' | 'failure' | 'neutral';

/**
 * A call refused at once because its service's breaker is open (or its half-open probe is
 * running). `BACKEND_UNAVAILABLE`, retryable, with `retryAfterSeconds` as RATE_LIMITED has it.
 */
export class BreakerOpenError extends BackendUnavailableError {
  constructor(
    readonly service: string,
    readonly retryAfterSeconds: number,
    readonly retryAt: string,
    backend: string,
    reason: string | null,
  ) {
    super(`backend "${backend}" (${service}) is unavailable: its circuit breaker is open${reason ? ` (${reason})` : ''}; it will be tried again in ${retryAfterSeconds} s, at ${retryAt}`, {
      backend,
      retryable: true,
    });
  }

  override toExtensions(): Record<string, unknown> {
    return { ...super.toExtensions(), service: this.service, breaker: 'OPEN', retryAfterSeconds: this.retryAfterSeconds, retryAt: this.retryAt };
  }
}

/** Call outcomes of one slice of the window. */
interface Bucket {
  start: number;
  calls: number;
  failures: number;
}

const BUCKETS = 10;

/** One service endpoint's breaker. */
export class Breaker {
  #state: BreakerState = 'CLOSED';
  #consecutive = 0;
  #openedUntil = 0;
  #openMs: number;
  #probing = false;
  #reason: string | null = null;
  readonly #buckets: Bucket[] = [];
  readonly #listeners = new Set<(s: BreakerStatus) => void>();

  constructor(
    readonly backend: string,
    readonly service: string,
    readonly options: BreakerOptions = BREAKER_DEFAULTS,
    /** The clock, for unit tests. */
    readonly now: () => number = Date.now,
  ) {
    this.#openMs = options.openMs;
  }

  /** The state now (an OPEN breaker whose time is up reads HALF_OPEN). */
  get state(): BreakerState {
    if (this.#state === 'OPEN' && this.now() >= this.#openedUntil) return 'HALF_OPEN';
    return this.#state;
  }

  /**
   * Lets a call through or throws {@link BreakerOpenError}. A call let through must be followed by
   * exactly one {@link Breaker.record} of its outcome, passing what this returned (the half-open
   * probe waits for it). @returns true when the call is the half-open probe
   */
  admit(): boolean {
    const state = this.state;
    if (state === 'CLOSED') return false;
    if (state === 'HALF_OPEN' && !this.#probing) {
      this.#probing = true;
      this.#setState('HALF_OPEN');
      return true;
    }
    // Open, or the one probe is on its way: tried again when the probe has had its deadline.
    const until = Math.max(this.#openedUntil, this.now() + 1000);
    const seconds = Math.max(1, Math.ceil((until - this.now()) / 1000));
    throw new BreakerOpenError(this.service, seconds, new Date(until).toISOString(), this.backend, this.#reason);
  }

  /**
   * Records how an admitted call ended. @param probe what `admit()` returned for it: a call let
   * through before the breaker opened and ending later does not decide for the probe.
   */
  record(outcome: CallOutcome, probe = false): void {
    if (probe) this.#probing = false;
    if (outcome === 'neutral') return;
    if (probe) {
      if (outcome === 'success') this.#close();
      else this.#open('the half-open probe failed', true);
      return;
    }
    if (this.#state !== 'CLOSED') return;
    const bucket = this.#bucket();
    bucket.calls++;
    if (outcome === 'success') {
      this.#consecutive = 0;
      return;
    }
    bucket.failures++;
    this.#consecutive++;
    if (this.#consecutive >= this.options.failures) return this.#open(`${this.#consecutive} failures in a row`, false);
    const { calls, failures } = this.#window();
    if (calls >= this.options.minCalls && failures * 100 >= calls * this.options.failureRatePercent) {
      this.#open(`${failures} of ${calls} calls failed in ${Math.round(this.options.windowMs / 1000)} s`, false);
    }
  }

  status(): BreakerStatus {
    const state = this.state;
    return {
      backend: this.backend,
      service: this.service,
      state,
      consecutiveFailures: this.#consecutive,
      retryAt: state === 'OPEN' ? new Date(this.#openedUntil).toISOString() : null,
      reason: this.#reason,
    };
  }

  /** Calls `listener` on every change to OPEN, HALF_OPEN or CLOSED; returns the unsubscribe. */
  onChange(listener: (s: BreakerStatus) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  #open(reason: string, again: boolean): void {
    if (again) this.#openMs = Math.min(this.options.maxOpenMs, this.#openMs * 2);
    this.#reason = reason;
    this.#openedUntil = this.now() + this.#openMs;
    this.#buckets.length = 0;
    this.#setState('OPEN');
  }

  #close(): void {
    this.#openMs = this.options.openMs;
    this.#consecutive = 0;
    this.#buckets.length = 0;
    this.#setState('CLOSED');
  }

  #setState(state: BreakerState): void {
    const changed = state !== this.#state;
    this.#state = state;
    if (!changed) return;
    const s = this.status();
    for (const l of this.#listeners) {
      try {
        l(s);
      } catch {
        /* a listener's bug must not break calls */
      }
    }
  }

  /** The current slice of the window, dropping slices that left it. */
  #bucket(): Bucket {
    const now = this.now();
    const width = this.options.windowMs / BUCKETS;
    while (this.#buckets.length > 0 && this.#buckets[0]!.start <= now - this.options.windowMs) this.#buckets.shift();
    const last = this.#buckets.at(-1);
    if (last && now < last.start + width) return last;
    const b = { start: now, calls: 0, failures: 0 };
    this.#buckets.push(b);
    return b;
  }

  #window(): { calls: number; failures: number } {
    let calls = 0;
    let failures = 0;
    for (const b of this.#buckets) {
      calls += b.calls;
      failures += b.failures;
    }
    return { calls, failures };
  }
}

/**
 * Every breaker of a gateway, created on first use per (backend, service) with one set of options,
 * so `/readyz`, `/metrics` and watchers find the same breaker the calls go through.
 */
export class BreakerBoard {
  readonly #breakers = new Map<string, Breaker>();

  constructor(readonly options: BreakerOptions = BREAKER_DEFAULTS) {}

  get(backend: string, service: string): Breaker {
    const key = `${backend}\u0000${service}`;
    let b = this.#breakers.get(key);
    if (!b) {
      b = new Breaker(backend, service, this.options);
      this.#breakers.set(key, b);
    }
    return b;
  }

  /** Every breaker's status, in creation order; only those of `backend` when given. */
  statuses(backend?: string): BreakerStatus[] {
    return [...this.#breakers.values()].filter((b) => backend === undefined || b.backend === backend).map((b) => b.status());
  }
}
