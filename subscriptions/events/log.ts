/**
 * The event log: changes in the order they were observed, each with a cursor, kept for a bounded
 * time and count. `since(cursor)` replays what a reconnecting subscriber missed; a cursor the log
 * no longer covers (older than retention, or from an earlier epoch) is CURSOR_EXPIRED, never a
 * silent gap. This is the interface; `in-process-log.ts` implements it for one process, and the
 * scale-out issue adds a Redis one behind the same interface.
 */
import type { ChangeEvent, ChangeInput } from './types';

/** Where a replay starts. */
export interface ReplayRequest {
  /** A cursor from an earlier event (or a list); null: from now on, nothing to replay. */
  since: string | null;
  /** Most events to return at once. @default 1000 */
  limit?: number;
}

/** A replay's answer. */
export interface Replay {
  events: ChangeEvent[];
  /** True when more events follow (call again with the last event's cursor). */
  more: boolean;
}

export interface EventLog {
  /** Adds a change; answers it with its cursor. */
  append(change: ChangeInput): Promise<ChangeEvent>;
  /**
   * The events after `since`, oldest first.
   * @throws CursorExpiredError when the log no longer holds every event after `since`
   * @throws BadUserInputError when `since` is not a cursor of this log
   */
  replay(r: ReplayRequest): Promise<Replay>;
  /** The cursor of the newest event (or of the empty log): resume point for a fresh list. */
  head(): Promise<string>;
  /** Calls `listener` for every appended event, in order; returns the unsubscribe function. */
  listen(listener: (e: ChangeEvent) => void): () => void;
}
