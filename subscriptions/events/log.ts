/**
 * The event log: changes in the order they were observed, each with a cursor, kept for a bounded
 * time and count. `since(cursor)` replays what a reconnecting subscriber missed; a cursor the log
 * no longer covers (older than retention, or from an earlier epoch) is CURSOR_EXPIRED, never a
 * silent gap. This is the interface; `in-process-log.ts` implements it for one process,
 * `redis-log.ts` on a Redis stream shared by every replica.
 */
import type { CursorExpiredError } from '../../adapters/contract/errors';
import type { ChangeEvent, ChangeInput } from './types';

/** How an append is written. */
export interface AppendOptions {
  /**
   * Write only while Redis holds `token` at `key` (a watcher's lease): otherwise the append rejects
   * with `LeaseLostError` and writes nothing, so a holder paused past its lease cannot write after
   * another replica took over. The in-process log has no other writer and ignores it. @default none
   */
  fence?: { key: string; token: string };
  /**
   * A value written with the append, in the same step and under the same fence (the lease holder's
   * memory of a backend's transitions, read by the next holder). An append of no changes writes
   * only this. The in-process log has no other reader and ignores it. @default none
   */
  keep?: { key: string; value: string };
}

/**
 * How a listener lost events (`EventLog.listen`'s `onLost`): `log`, the whole log (Redis lost its
 * data: a new log started); `tail`, its newest entries, which this listener had been told of (a
 * Redis failover to a replica that had not received them); `behind`, entries it had not been told
 * of yet (it fell behind the log's retention).
 */
export type LogLoss = 'log' | 'tail' | 'behind';

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
  /**
   * Adds a change; answers it with its cursor.
   * @throws LeaseLostError when `options.fence` does not hold (nothing written)
   */
  append(change: ChangeInput, options?: AppendOptions): Promise<ChangeEvent>;
  /** Adds changes in order, at once (one Redis call); answers them with their cursors. @throws LeaseLostError as `append` */
  appendMany(changes: readonly ChangeInput[], options?: AppendOptions): Promise<ChangeEvent[]>;
  /**
   * The events after `since`, oldest first.
   * @throws CursorExpiredError when the log no longer holds every event after `since`
   * @throws BadUserInputError when `since` is not a cursor of this log
   */
  replay(r: ReplayRequest): Promise<Replay>;
  /** The cursor of the newest event (or of the empty log): resume point for a fresh list. */
  head(): Promise<string>;
  /**
   * Calls `listener` for every appended event, in order (the in-process log within `append`, the
   * Redis log from its stream reader, later); returns the unsubscribe function. `onLost` is called
   * when the log lost events the listener had not been told of (Redis lost its data, or the reader
   * fell behind retention): the listener's subscribers have a gap and must resume from a list.
   */
  listen(listener: (e: ChangeEvent) => void, onLost?: (err: CursorExpiredError, kind: LogLoss) => void): () => void;
  /**
   * Keeps retention from trimming past `cursor` for `holder` until it stops renewing (the Redis
   * log: a view snapshot's position). Absent where nothing reads the log from a snapshot.
   */
  hold?(holder: string, cursor: string): Promise<boolean>;
  /**
   * Resolves once this process's reader of a shared log has read it on its current connection, at
   * once when it has, or after `timeoutMs` when it cannot (Redis away); never rejects. A position
   * taken while the reader's connection is down may stand in a tail a failover lost, which the
   * reader tells (ending its listeners' subscriptions) only at its first read from the new primary.
   * Absent where the log is this process's own.
   */
  current?(timeoutMs: number): Promise<void>;
  /** Stops what the log runs in the background (the Redis log's reader and its connection). */
  close?(): Promise<void>;
}
