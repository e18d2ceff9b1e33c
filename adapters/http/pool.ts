/**
 * The undici pool of one backend origin, its connection slots, and its replacement when it can
 * no longer serve. Calls wait for a slot here rather than in undici's queue, where aborting a
 * request does not settle it and where it would still be sent (on a new connection) after its
 * caller left.
 *
 * undici 7 (7.30.2) can lose a pool's connection slot for good: a request it refuses while
 * building it (a bad header value, name, path or method) marks its Client "needs drain" and no
 * drain ever comes. Once every slot is lost, requests queue in the pool forever, and aborting
 * their signals does not settle them (a queued request only notices its abort when it gets a
 * connection). The transport settles such calls by its own timer; this module notices the pool
 * is wedged and swaps in a fresh one, so the next call works.
 */
import { Pool, type Dispatcher } from 'undici';

/** After a deadline, how long undici may take to settle the aborted request before the pool is suspect. */
const UNSETTLED_GRACE_MS = 1_000;
/** On shutdown, how long in-flight requests get before connections are cut (the server has drained by then). */
const CLOSE_DRAIN_MS = 1_000;

/** What one call tells the keeper about itself. */
export interface CallState {
  /** The pool its last attempt went to. */
  pool?: Pool;
  /** True once undici settled that attempt (answer or error). */
  settled: boolean;
}

/** A response with its body read. */
export interface Exchange {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
}

export class PoolKeeper {
  #pool: Pool;
  readonly #slots: Slots;
  readonly #retiring = new Set<Promise<void>>();
  #closed = false;

  /**
   * @param drainMs how long a retired pool's requests may still run (the call deadline: none
   *   legitimately runs longer), then its connections are destroyed.
   */
  constructor(
    readonly origin: string,
    readonly connections: number,
    readonly drainMs: number,
  ) {
    this.#slots = new Slots(connections);
    this.#pool = this.#create();
  }

  /**
   * One HTTP exchange, body read. It waits for one of `connections` slots here, not in undici:
   * a call still waiting when `stop` aborts is never handed to undici (which would open a
   * connection for it even so), and a call handed over goes on the wire at once. The slot is
   * given back when the exchange ends, or when `signal` aborts even if undici never settles.
   * @param beforeSend runs once the slot is taken, just before sending; it may throw to cancel.
   */
  async exchange(
    options: Dispatcher.RequestOptions<unknown> & { signal: AbortSignal },
    state: CallState,
    stop: AbortSignal,
    beforeSend?: () => void,
  ): Promise<Exchange> {
    await this.#slots.acquire(stop);
    try {
      beforeSend?.();
      const res = await untilAborted(this.request(options, state), options.signal);
      const text = await untilAborted(res.body.text(), options.signal);
      return { status: res.statusCode, headers: res.headers, text };
    } finally {
      this.#slots.release();
    }
  }

  /** Sends through the current pool (no slot: `exchange` is the way in) and notes it in `state`. */
  request(options: Dispatcher.RequestOptions<unknown>, state: CallState): Promise<Dispatcher.ResponseData<unknown>> {
    const pool = this.#pool;
    state.pool = pool;
    state.settled = false;
    const p = pool.request(options);
    p.then(
      () => (state.settled = true),
      () => (state.settled = true),
    );
    return p;
  }

  /**
   * Called when a call's deadline passed (its signal is aborted now). Retires the pool if it
   * holds queued requests while slots sit unused (the leak), or if undici does not settle the
   * aborted request soon: either way the pool is not serving.
   */
  afterDeadline(state: CallState): void {
    const pool = state.pool;
    if (!pool || state.settled || this.#closed) return;
    // Confirmed a moment later: for one microtask after an answer a healthy pool can look the same.
    if (this.#leaking(pool)) setTimeout(() => this.#leaking(pool) && this.retire(pool), 10).unref();
    setTimeout(() => !state.settled && state.pool === pool && this.retire(pool), UNSETTLED_GRACE_MS).unref();
  }

  /**
   * Replaces `pool` (default: the current one) with a fresh pool. Its in-flight requests may
   * finish within `drainMs`; then its connections are destroyed, failing whatever is left.
   */
  retire(pool: Pool = this.#pool): void {
    if (pool !== this.#pool || this.#closed) return;
    this.#pool = this.#create();
    const done = drain(pool, this.drainMs).finally(() => this.#retiring.delete(done));
    this.#retiring.add(done);
  }

  /** Times the current pool was replaced, for tests and diagnostics. */
  replacements = 0;

  /** Closes every pool, cutting connections still busy after a short while. */
  async close(): Promise<void> {
    this.#closed = true;
    await Promise.all([drain(this.#pool, CLOSE_DRAIN_MS), ...this.#retiring]);
  }

  /** Requests wait in the pool's queue although fewer than `connections` are held by its clients. */
  #leaking(pool: Pool): boolean {
    const s = pool.stats;
    return s.queued > 0 && s.size - s.queued < this.connections;
  }

  #create(): Pool {
    if (this.#pool) this.replacements++;
    return new Pool(this.origin, { connections: this.connections, keepAliveTimeout: 10_000 });
  }
}

/** `pool.close()` waits for queued requests, which a wedged pool never runs: destroy after `ms`. */
async function drain(pool: Pool, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const closed = await Promise.race([
    pool.close().then(
      () => true,
      () => true,
    ),
    new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), ms))),
  ]);
  clearTimeout(timer);
  if (!closed) await pool.destroy().catch(() => undefined);
}

/** `p`, or a rejection with the signal's reason as soon as it aborts (undici may never settle). */
function untilAborted<T>(p: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    p.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

/** A counting semaphore whose waiters leave when their signal aborts. */
class Slots {
  readonly #waiters: Array<() => void> = [];

  constructor(private free: number) {}

  acquire(signal: AbortSignal): Promise<void> {
    if (signal.aborted) return Promise.reject(signal.reason);
    if (this.free > 0) {
      this.free--;
      return Promise.resolve();
    }
    return new Promise<void>((resolve, reject) => {
      const grant = (): void => {
        signal.removeEventListener('abort', onAbort);
        resolve();
      };
      const onAbort = (): void => {
        this.#waiters.splice(this.#waiters.indexOf(grant), 1);
        reject(signal.reason);
      };
      signal.addEventListener('abort', onAbort, { once: true });
      this.#waiters.push(grant);
    });
  }

  release(): void {
    const next = this.#waiters.shift();
    if (next) next();
    else this.free++;
  }
}
