/**
 * The event log in one process's memory: a ring bounded by count and age. Its epoch is random per
 * construction, so after a restart (an empty log) every earlier cursor is CURSOR_EXPIRED.
 */
import { randomBytes } from 'node:crypto';
import { CursorExpiredError } from '../../adapters/contract/errors';
import { decodeCursor, encodeCursor } from './cursor';
import type { AppendOptions, EventLog, LogLoss, Replay, ReplayRequest } from './log';
import type { ChangeEvent, ChangeInput } from './types';

/** How much the log keeps unless told; the `live` settings (`eventLogMaxEvents`, `eventLogRetentionMs`) take their defaults from here. */
export const EVENT_LOG_DEFAULTS = Object.freeze({ maxEvents: 10_000, retentionMs: 900_000 });

/** Options of {@link InProcessEventLog}. */
export interface InProcessEventLogOptions {
  /** Most events kept. @default {@link EVENT_LOG_DEFAULTS} (10000) */
  maxEvents?: number;
  /** Longest an event is kept, in milliseconds. @default {@link EVENT_LOG_DEFAULTS} (900000: 15 min) */
  retentionMs?: number;
  /** The log's epoch. @default random */
  epoch?: string;
  /** The clock, for retention. @default Date.now */
  now?: () => number;
}

interface Stored {
  seq: number;
  at: number;
  event: ChangeEvent;
}

export class InProcessEventLog implements EventLog {
  readonly epoch: string;
  readonly #events: Stored[] = [];
  readonly #listeners = new Set<(e: ChangeEvent) => void>();
  readonly #max: number;
  readonly #retentionMs: number;
  readonly #now: () => number;
  /** Sequence of the newest event; 0 while empty. */
  #seq = 0;
  /** Sequence of the newest event dropped by retention; cursors before it cannot be replayed. */
  #dropped = 0;

  constructor(o: InProcessEventLogOptions = {}) {
    this.epoch = o.epoch ?? randomBytes(6).toString('base64url');
    this.#max = o.maxEvents ?? EVENT_LOG_DEFAULTS.maxEvents;
    this.#retentionMs = o.retentionMs ?? EVENT_LOG_DEFAULTS.retentionMs;
    this.#now = o.now ?? Date.now;
  }

  /** `options.fence` is ignored: one process has no other writer. */
  async append(change: ChangeInput, _options?: AppendOptions): Promise<ChangeEvent> {
    const seq = ++this.#seq;
    const event: ChangeEvent = { ...change, cursor: encodeCursor({ epoch: this.epoch, seq }) };
    this.#events.push({ seq, at: this.#now(), event });
    this.#trim();
    for (const l of this.#listeners) l(event);
    return event;
  }

  async appendMany(changes: readonly ChangeInput[], options?: AppendOptions): Promise<ChangeEvent[]> {
    const out: ChangeEvent[] = [];
    for (const c of changes) out.push(await this.append(c, options));
    return out;
  }

  async replay(r: ReplayRequest): Promise<Replay> {
    this.#trim();
    if (r.since === null) return { events: [], more: false };
    const c = decodeCursor(r.since);
    if (c.epoch !== this.epoch || c.ms !== undefined)
      throw new CursorExpiredError('since', 'the cursor is from before the event log restarted');
    if (c.seq > this.#seq)
      throw new CursorExpiredError(
        'since',
        "the cursor is ahead of this event log (another replica's, or from before a restart)",
      );
    if (c.seq < this.#dropped)
      throw new CursorExpiredError('since', "the events after the cursor are past the event log's retention");
    const limit = Math.max(1, r.limit ?? 1000);
    // Sequences are dense: the event after `c.seq` sits at index c.seq - first seq kept.
    const first = this.#events[0]?.seq ?? this.#seq + 1;
    const from = c.seq + 1 - first;
    const events = this.#events.slice(from, from + limit).map((s) => s.event);
    return { events, more: from + limit < this.#events.length };
  }

  async head(): Promise<string> {
    return encodeCursor({ epoch: this.epoch, seq: this.#seq });
  }

  /** Never calls `onLost`: this log loses nothing while it lives, and a restart is a new epoch. */
  listen(listener: (e: ChangeEvent) => void, _onLost?: (err: CursorExpiredError, kind: LogLoss) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** Drops events over the count bound and past retention, remembering the newest dropped. */
  #trim(): void {
    const oldest = this.#now() - this.#retentionMs;
    while (this.#events.length > 0 && (this.#events.length > this.#max || this.#events[0]!.at < oldest))
      this.#dropped = this.#events.shift()!.seq;
  }
}
