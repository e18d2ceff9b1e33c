/**
 * What one subscription event may read from backends: at most `perCredential` requests for the
 * subscribers that carry the same credentials (their executions share loaders, so a distinct read
 * is one request), and at most `perEvent` for all subscribers together, a safety valve against an
 * event that thousands of distinct credentials would each read for. A read past either is not
 * sent: the field that needed it is null with NOT_SERVED_IN_EVENTS, `limit` naming the budget.
 */
import { CallBudget } from '../../adapters/contract/budget';
import { NotServedInEventsError, type EventReadLimit } from '../../adapters/contract/errors';

/** The defaults of the event read settings (`LIVE_EVENT_READS_…`, server/live-config.ts). */
export const EVENT_READ_DEFAULTS = Object.freeze({
  perCredential: 20,
  perEvent: 500,
  cacheTtlMs: 10_000,
  cacheMaxEntries: 10_000,
});

/** Limits of an event's backend reads. */
export interface EventReadLimits {
  /** Backend requests one event may send for the subscribers with the same credentials. @default {@link EVENT_READ_DEFAULTS} (20) */
  perCredential: number;
  /** Backend requests one event may send for all its subscribers together. @default {@link EVENT_READ_DEFAULTS} (500) */
  perEvent: number;
  /**
   * Longest a plugin or a Nova server read for an event is reused by later events with the same
   * credential, in ms; 0 turns the cache off. @default {@link EVENT_READ_DEFAULTS} (10000)
   */
  cacheTtlMs: number;
  /** Most reads that cache holds, across credentials. @default {@link EVENT_READ_DEFAULTS} (10000) */
  cacheMaxEntries: number;
}

/** Told of each read an event sends and each it refuses (metrics). */
export interface EventReadHooks {
  read?(): void;
  refused?(limit: EventReadLimit): void;
  /** A plugin or server answered from the per-credential cache. */
  cacheHit?(): void;
}

/** The reads of one event, all credentials together, against `perEvent`. */
export class EventReadCount {
  #used = 0;

  constructor(
    readonly max: number,
    readonly hooks: EventReadHooks,
  ) {}

  /**
   * Counts one read.
   * @throws NotServedInEventsError when the event's reads are spent (nothing is sent then)
   */
  take(): void {
    if (this.#used >= this.max) throw refuse(this.hooks, 'eventReadsPerEvent', this.max);
    this.#used++;
    this.hooks.read?.();
  }
}

/**
 * The budget the shared reads of one credential carry through the transport (one unit per HTTP
 * request it sends, as an execution's `CallBudget`), counting every backend together.
 */
export class CredentialReadBudget extends CallBudget {
  #used = 0;

  constructor(
    perCredential: number,
    private readonly event: EventReadCount,
  ) {
    super(perCredential);
  }

  /** @throws NotServedInEventsError when this credential's reads, or the event's, are spent */
  override take(): void {
    if (this.#used >= this.perBackend) throw refuse(this.event.hooks, 'eventReadsPerCredential', this.perBackend);
    this.event.take();
    this.#used++;
  }
}

function refuse(hooks: EventReadHooks, limit: EventReadLimit, max: number): NotServedInEventsError {
  hooks.refused?.(limit);
  return new NotServedInEventsError(limit, max);
}
