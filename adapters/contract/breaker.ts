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
 * - OPEN fails callers' calls at once ({@link BreakerOpenError}) until a probe succeeds. Probes
 *   are the gateway's background probe (server/readiness.ts), never a caller's call: once `openMs`
 *   has passed since the breaker opened, each probe is let through (HALF_OPEN while it runs, one
 *   at a time); a success closes the breaker, a failure leaves it OPEN for the next probe. So it
 *   closes within one probe interval (`READINESS_PROBE_INTERVAL_MS`) of the service's return once
 *   the open time is past (docs/configuration.md "Circuit breakers").
 * - A breaker that opens again within `windowMs` of closing (a service that answers probes but
 *   fails calls) stays open twice as long as the last time, up to `maxOpenMs`.
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
  /** Shortest time open before a probe may close it, ms; doubles when it opens again within `windowMs` of closing. @default 5000 */
  openMs: number;
  /** Longest such time, ms. @default 60000 */
  maxOpenMs: number;
}

export const BREAKER_DEFAULTS: Readonly<BreakerOptions> = Object.freeze({
  failures: 5,
  failureRatePercent: 50,
  minCalls: 10,
  windowMs: 30_000,
  openMs: 5_000,
  maxOpenMs: 60_000,
});

/** What `/readyz` and `/metrics` show of one breaker. */
export interface BreakerStatus {
  backend: string;
  /** `nomad`, `keystone`, `cinder` or `nova`. */
  service: string;
  state: BreakerState;
  /** Failures in a row now. */
  consecutiveFailures: number;
  /** When the next probe may close an open breaker (RFC 3339, an estimate from the probe interval); null unless OPEN. */
  retryAt: string | null;
  /** Why it opened last, for humans; null while it never opened. */
  reason: string | null;
}

/** How a call through the breaker ended. */
export type CallOutcome = 'success' | 'failure' | 'neutral';

/**
 * A call refused at once because its service's breaker is not closed (open, or its probe is
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
    super(
      `backend "${backend}" (${service}) is unavailable: its circuit breaker is open${reason ? ` (${reason})` : ''}; it will be tried again in ${retryAfterSeconds} s, at ${retryAt}`,
      {
        backend,
        retryable: true,
      },
    );
  }

  override toExtensions(): Record<string, unknown> {
    return {
      ...super.toExtensions(),
      service: this.service,
      breaker: 'OPEN',
      retryAfterSeconds: this.retryAfterSeconds,
      retryAt: this.retryAt,
    };
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
  #closedAt = 0;
  #lastProbeAt = 0;
  #probing = false;
  #reason: string | null = null;
  readonly #buckets: Bucket[] = [];
  readonly #listeners = new Set<(s: BreakerStatus) => void>();
  /** How often the background probe runs (set by its board), for `retryAfterSeconds`. @default unknown */
  probeIntervalMs: number | undefined;

  constructor(
    readonly backend: string,
    readonly service: string,
    readonly options: BreakerOptions = BREAKER_DEFAULTS,
    /** The clock, for unit tests. */
    readonly now: () => number = Date.now,
  ) {
    this.#openMs = options.openMs;
  }

  /** The state now: HALF_OPEN only while a probe is on its way. */
  get state(): BreakerState {
    return this.#state;
  }

  /** When a probe may first pass (the open time's end, ms since epoch); null while CLOSED. */
  get probeDueAt(): number | null {
    return this.#state === 'CLOSED' ? null : this.#openedUntil;
  }

  /**
   * Lets a call through or throws {@link BreakerOpenError}. A call let through must be followed by
   * exactly one {@link Breaker.record} of its outcome, passing what this returned.
   * @param probe true only for the background probe: it alone may pass a breaker that is not
   *   closed, once the open time is past and no other probe runs
   * @returns true when the call is a probe that decides whether the breaker closes
   */
  admit(probe = false): boolean {
    const now = this.now();
    if (probe) this.#lastProbeAt = now;
    if (this.#state === 'CLOSED') return false;
    if (probe && !this.#probing && now >= this.#openedUntil) {
      this.#probing = true;
      this.#setState('HALF_OPEN');
      return true;
    }
    const until = this.#retryAt(now);
    const seconds = Math.max(1, Math.ceil((until - now) / 1000));
    throw new BreakerOpenError(this.service, seconds, new Date(until).toISOString(), this.backend, this.#reason);
  }

  /**
   * Records how an admitted call ended. @param probe what `admit()` returned for it: a call let
   * through before the breaker opened and ending later does not decide for the probe.
   */
  record(outcome: CallOutcome, probe = false): void {
    if (probe) {
      this.#probing = false;
      if (outcome === 'success') return this.#close();
      if (outcome === 'failure') this.#reason = 'the probe failed';
      // Open until the next probe (an abandoned probe decides nothing).
      return this.#setState('OPEN');
    }
    if (outcome === 'neutral' || this.#state !== 'CLOSED') return;
    const bucket = this.#bucket();
    bucket.calls++;
    if (outcome === 'success') {
      this.#consecutive = 0;
      return;
    }
    bucket.failures++;
    this.#consecutive++;
    if (this.#consecutive >= this.options.failures) return this.#open(`${this.#consecutive} failures in a row`);
    const { calls, failures } = this.#window();
    if (calls >= this.options.minCalls && failures * 100 >= calls * this.options.failureRatePercent) {
      this.#open(`${failures} of ${calls} calls failed in ${Math.round(this.options.windowMs / 1000)} s`);
    }
  }

  status(): BreakerStatus {
    const state = this.state;
    return {
      backend: this.backend,
      service: this.service,
      state,
      consecutiveFailures: this.#consecutive,
      retryAt: state === 'OPEN' ? new Date(this.#retryAt(this.now())).toISOString() : null,
      reason: this.#reason,
    };
  }

  /** Calls `listener` on every change to OPEN, HALF_OPEN or CLOSED; returns the unsubscribe. */
  onChange(listener: (s: BreakerStatus) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  #open(reason: string): void {
    const now = this.now();
    // Opening again soon after closing: the service answers probes but fails calls.
    const flapping = this.#closedAt > 0 && now - this.#closedAt < this.options.windowMs;
    this.#openMs = flapping ? Math.min(this.options.maxOpenMs, this.#openMs * 2) : this.options.openMs;
    this.#reason = reason;
    this.#openedUntil = now + this.#openMs;
    this.#buckets.length = 0;
    this.#setState('OPEN');
  }

  #close(): void {
    this.#closedAt = this.now();
    this.#consecutive = 0;
    this.#buckets.length = 0;
    this.#setState('CLOSED');
  }

  /**
   * When a probe may next close it: when the open time ends (the prober wakes for it), else the
   * next probe (`probeIntervalMs` after the last one); at least a second from now.
   */
  #retryAt(now: number): number {
    let at = this.#openedUntil;
    const every = this.probeIntervalMs;
    if (at <= now && every !== undefined && this.#lastProbeAt > 0) at = this.#lastProbeAt + every;
    return Math.max(at, now + 1000);
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
  readonly #listeners = new Set<(s: BreakerStatus) => void>();
  #probeIntervalMs: number | undefined;

  constructor(readonly options: BreakerOptions = BREAKER_DEFAULTS) {}

  get(backend: string, service: string): Breaker {
    const key = `${backend}\u0000${service}`;
    let b = this.#breakers.get(key);
    if (!b) {
      b = new Breaker(backend, service, this.options);
      b.probeIntervalMs = this.#probeIntervalMs;
      b.onChange((s) => {
        for (const l of this.#listeners) l(s);
      });
      this.#breakers.set(key, b);
    }
    return b;
  }

  /** Calls `listener` on every change of any breaker, made now or later; returns the unsubscribe. */
  onChange(listener: (s: BreakerStatus) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** When a probe may first close a breaker of `backend` that is not closed; undefined when all are closed. */
  probeDueAt(backend: string): number | undefined {
    let due: number | undefined;
    for (const b of this.#breakers.values()) {
      const at = b.backend === backend ? b.probeDueAt : null;
      if (at !== null && (due === undefined || at < due)) due = at;
    }
    return due;
  }

  /** The background probe runs every `ms` (server/readiness.ts): refused callers are told when it comes. */
  probedEvery(ms: number): void {
    this.#probeIntervalMs = ms;
    for (const b of this.#breakers.values()) b.probeIntervalMs = ms;
  }

  /** Every breaker's status, in creation order; only those of `backend` when given. */
  statuses(backend?: string): BreakerStatus[] {
    return [...this.#breakers.values()]
      .filter((b) => backend === undefined || b.backend === backend)
      .map((b) => b.status());
  }
}
