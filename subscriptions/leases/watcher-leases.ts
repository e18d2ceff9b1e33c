/**
 * Watcher leases (docs/scaling.md): exactly one replica runs the watcher of each backend. A lease
 * is a Redis key holding a fencing token, with a TTL; the holder renews it, the others retry while
 * it is taken, and whoever holds it writes the event log only through a script that checks the
 * token ({@link WatcherLeases.fence}), so a holder paused past its TTL cannot write after a takeover.
 *
 * Locally a lease ends at a deadline: `ttlMs - safetyMarginMs` after the last successful renew was
 * *sent*. Redis keeps the key at least `ttlMs` from when it received that renew, so the holder
 * learns of the loss (and `onChange(backend, false)` fires) before another replica can take over,
 * even when Redis never answers. The deadline is checked by its own timer, on every step, and in
 * `holds`/`fence`, so a process resumed after a pause learns it first.
 *
 * Redis errors never reject and never stop the loop: they go to `onError`, and the loop retries.
 * When Redis is new or lost its data, nobody gets a lease for one TTL (scripts.ts, `ACQUIRE`), so a
 * holder from before has stopped first.
 */
import { fenceKey, leaseKey, runScript, ACQUIRE, RELEASE, RENEW } from './scripts';
import { readHolders } from './holders';
import {
  checkName,
  leaseSettings,
  LeasesStoppedError,
  type LeaseChange,
  type LeaseErrorOp,
  type LeaseHolder,
  type LeaseSettings,
  type LeaseStats,
  type WatcherLeasesOptions,
} from './options';

/** One contended backend. */
interface Slot {
  backend: string;
  key: string;
  fenceKey: string;
  /** The token while held (locally), else null. */
  token: string | null;
  /** The last token this replica was given ('' before any): it may take the key back while it still holds it. */
  previous: string;
  /** Local deadline of the held lease, on the settings' clock. */
  deadline: number;
  expiry?: NodeJS.Timeout;
  next?: NodeJS.Timeout;
  busy: boolean;
}

/** One replica's leases: which backends' watchers it may run, and the fence its writes carry. */
export class WatcherLeases {
  readonly #s: LeaseSettings;
  readonly #slots = new Map<string, Slot>();
  #stopped = false;
  #acquisitions = 0;
  #losses = 0;

  /** @throws LeaseOptionError when an option is out of range */
  constructor(options: WatcherLeasesOptions) {
    this.#s = leaseSettings(options);
  }

  /** This process's replica id (in every token it is given). */
  get replicaId(): string {
    return this.#s.replicaId;
  }

  /** The settings in force, defaults filled in (for logs and docs). */
  get settings(): { ttlMs: number; renewEveryMs: number; safetyMarginMs: number; keyPrefix: string } {
    const { ttlMs, renewEveryMs, safetyMarginMs, keyPrefix } = this.#s;
    return { ttlMs, renewEveryMs, safetyMarginMs, keyPrefix };
  }

  /**
   * Starts trying for each backend's lease (once per backend, however often it is named): at once,
   * then every `renewEveryMs`, or when the holder's lease would expire if that is sooner.
   * @throws LeaseOptionError for a bad backend id; LeasesStoppedError after `release()`/`stop()`
   */
  contend(backends: string[]): void {
    if (this.#stopped) throw new LeasesStoppedError();
    for (const b of backends) checkName('backend', b);
    for (const backend of backends) {
      if (this.#slots.has(backend)) continue;
      const slot: Slot = {
        backend,
        key: leaseKey(this.#s.keyPrefix, backend),
        fenceKey: fenceKey(this.#s.keyPrefix, backend),
        token: null,
        previous: '',
        deadline: 0,
        busy: false,
      };
      this.#slots.set(backend, slot);
      void this.#step(slot);
    }
  }

  /** Whether this replica holds the backend's lease now (its local deadline not passed). */
  holds(backend: string): boolean {
    return this.fence(backend) !== null;
  }

  /**
   * What the event log's append script checks (`GET key == token`), or null when this replica does
   * not hold the lease (its local deadline is checked first, and a loss reported, before answering).
   */
  fence(backend: string): { key: string; token: string } | null {
    const slot = this.#slots.get(backend);
    if (!slot) return null;
    this.#check(slot);
    return slot.token === null ? null : { key: slot.key, token: slot.token };
  }

  /** Held leases with the ms left before their local deadlines, and the gain/loss counters (no Redis call). */
  stats(): LeaseStats {
    const now = this.#s.now();
    const held: LeaseStats['held'] = [];
    for (const slot of this.#slots.values()) {
      this.#check(slot);
      if (slot.token !== null)
        held.push({ backend: slot.backend, token: slot.token, msLeft: Math.round(slot.deadline - now) });
    }
    return { held, acquisitions: this.#acquisitions, losses: this.#losses };
  }

  /**
   * Who holds each contended backend's lease (or those named), as Redis says now, for `/readyz`.
   * Rejects when Redis does not answer, or with LeaseOptionError for a bad backend id.
   */
  async holders(backends: string[] = [...this.#slots.keys()]): Promise<LeaseHolder[]> {
    for (const b of backends) checkName('backend', b);
    return readHolders(this.#s.client, this.#s.keyPrefix, this.#s.replicaId, backends);
  }

  /**
   * Gives up every held lease (SIGTERM): reports each lost (`released`) so the watcher stops, then
   * deletes the key if it still holds this replica's token, so another replica takes over within
   * one `renewEveryMs` instead of a TTL. Stops every timer. Waits at most `ttlMs` for Redis (the
   * keys expire by then anyway). Never rejects.
   */
  async release(): Promise<void> {
    this.#halt();
    const held = [...this.#slots.values()].filter((s) => s.token !== null);
    const deletes = held.map((slot) => {
      const token = slot.token!;
      this.#lose(slot, 'released');
      return this.#delete(slot, token);
    });
    let timer: NodeJS.Timeout | undefined;
    const bound = new Promise<void>((r) => (timer = setTimeout(r, this.#s.ttlMs).unref()));
    await Promise.race([Promise.all(deletes), bound]);
    clearTimeout(timer);
  }

  /**
   * Stops trying and renewing without releasing (tests; a shutdown that cannot reach Redis): a held
   * lease stays held locally until its deadline, when `onChange(backend, false, 'expired')` fires,
   * and in Redis until its TTL.
   */
  stop(): void {
    this.#halt();
  }

  #halt(): void {
    this.#stopped = true;
    for (const slot of this.#slots.values()) clearTimeout(slot.next);
  }

  /** One step of a backend's loop: renew the lease if held, else try for it; then schedule the next. */
  async #step(slot: Slot): Promise<void> {
    if (this.#stopped || slot.busy) return;
    slot.busy = true;
    this.#check(slot);
    const delay = slot.token !== null ? await this.#renew(slot, slot.token) : await this.#acquire(slot);
    slot.busy = false;
    if (this.#stopped) return;
    clearTimeout(slot.next);
    slot.next = setTimeout(() => void this.#step(slot), delay).unref();
  }

  /** Tries for the lease; answers the ms until the next step. Never rejects. */
  async #acquire(slot: Slot): Promise<number> {
    const { client, replicaId, ttlMs, renewEveryMs, now } = this.#s;
    const sent = now();
    let reply: [number, string, number];
    try {
      reply = (await runScript(
        client,
        ACQUIRE,
        [slot.key, slot.fenceKey],
        [replicaId, String(ttlMs), slot.previous],
      )) as [number, string, number];
    } catch (err) {
      this.#error(slot.backend, 'acquire', err);
      return renewEveryMs;
    }
    const [taken, token, pttl] = reply;
    if (taken !== 1) return pttl >= 0 ? Math.min(renewEveryMs, pttl + 1) : renewEveryMs;
    slot.previous = token;
    // Released or stopped while the script ran: never announced, so give it straight back.
    if (this.#stopped) {
      void this.#delete(slot, token);
      return renewEveryMs;
    }
    slot.token = token;
    this.#held(slot, sent);
    this.#acquisitions++;
    this.#emit(slot.backend, true, { token, reason: 'acquired' });
    return renewEveryMs;
  }

  /** Extends the lease while it holds `token`; answers the ms until the next step. Never rejects. */
  async #renew(slot: Slot, token: string): Promise<number> {
    const { client, ttlMs, renewEveryMs, now } = this.#s;
    const sent = now();
    let reply: [number, string | null];
    try {
      reply = (await runScript(client, RENEW, [slot.key], [token, String(ttlMs)])) as [number, string | null];
    } catch (err) {
      this.#error(slot.backend, 'renew', err);
      return renewEveryMs;
    }
    // The deadline may have passed while the command was out: that loss stands, the answer is stale.
    this.#check(slot);
    if (slot.token !== token) return renewEveryMs;
    if (reply[0] === 1) {
      this.#held(slot, sent);
      return renewEveryMs;
    }
    const gone = reply[1] === null || reply[1] === undefined;
    this.#lose(slot, gone ? 'gone' : 'taken');
    // Gone (expired, or Redis lost its data): contend again at once.
    return gone ? 0 : renewEveryMs;
  }

  /** Deletes the key if it still holds `token`. Never rejects. */
  async #delete(slot: Slot, token: string): Promise<void> {
    try {
      await runScript(this.#s.client, RELEASE, [slot.key], [token]);
    } catch (err) {
      this.#error(slot.backend, 'release', err);
    }
  }

  /** Sets the local deadline from when the successful command was sent, and its timer. */
  #held(slot: Slot, sent: number): void {
    slot.deadline = sent + this.#s.ttlMs - this.#s.safetyMarginMs;
    this.#arm(slot);
  }

  /** Reports the lease lost if its local deadline has passed. */
  #check(slot: Slot): void {
    if (slot.token !== null && slot.deadline - this.#s.now() <= 0) this.#lose(slot, 'expired');
  }

  /** (Re)arms the deadline timer; a timer that fires a little early (clock rounding) is set again for the rest. */
  #arm(slot: Slot): void {
    clearTimeout(slot.expiry);
    const left = slot.deadline - this.#s.now();
    if (left <= 0) return this.#check(slot);
    slot.expiry = setTimeout(() => this.#arm(slot), left + 1).unref();
  }

  #lose(slot: Slot, reason: LeaseChange['reason']): void {
    const token = slot.token;
    if (token === null) return;
    slot.token = null;
    clearTimeout(slot.expiry);
    this.#losses++;
    this.#emit(slot.backend, false, { token, reason });
  }

  #emit(backend: string, held: boolean, info: LeaseChange): void {
    try {
      this.#s.onChange(backend, held, info);
    } catch (err) {
      this.#error(backend, 'onChange', err);
    }
  }

  #error(backend: string, op: LeaseErrorOp, err: unknown): void {
    try {
      this.#s.onError(backend, op, err);
    } catch {
      // onError must not throw; if it does, the loop still carries on.
    }
  }
}
