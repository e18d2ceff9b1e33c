/**
 * The Redis event log's stream reader: on a connection of its own (a blocking read would be cut by
 * the shared client's command timeout), it waits with `XREAD BLOCK` and then reads with the read
 * script, which checks the log's id and what was trimmed in the same step as it reads. So it
 * delivers every entry once, in stream order, across reconnects (it resumes from the last id it
 * read), and says so when it cannot: RedisClient lost the log (a new log id) or trimmed entries it had
 * not read yet (it fell behind retention). Every replica runs one: each needs every event, so
 * there is no consumer group.
 */
import { ownConnection, type RedisClient } from '../redis-client';
import { CursorExpiredError } from '../../adapters/contract/errors';
import { compareCursors } from './cursor';
import type { LogLoss } from './log';
import { readScript, type LogKeys, type LogState, type RawEntry } from './redis-log-script';

/** Splits a stream id `ms-seq` into exact numbers. @throws Error when a part is not a safe integer */
export function streamIdParts(id: string): { ms: number; seq: number } {
  const [ms, seq] = id.split('-').map(Number);
  if (!Number.isSafeInteger(ms) || !Number.isSafeInteger(seq))
    throw new Error(`stream id ${id} is not exact as numbers`);
  return { ms: ms!, seq: seq! };
}

/** Orders two stream ids. */
export const compareIds = (a: string, b: string): number =>
  compareCursors({ epoch: '', ...streamIdParts(a) }, { epoch: '', ...streamIdParts(b) });

/**
 * Why the log no longer holds every entry after the stream id `at` (null: it does).
 * - `ahead`: `at` is past the newest id (Redis lost its newest entries: a failover, or a restart).
 * - `lost`: `at` is within the stream but its own entry is gone: a failover dropped the tail it was
 *   in, and new entries came after. A cursor is good only while its own entry is there.
 * - `trimmed`: trims drop the oldest entries, so entries were dropped after `at` unless nothing was
 *   dropped at all, or `at` is at least the first kept entry or the id just before it. (The last
 *   dropped entry's own id is not recorded: a cursor at it, with a gap of ids before the first kept
 *   one, is expired too; never a gap.) `max-deleted-entry-id` covers entries deleted one by one.
 */
export function whyExpired(at: string, s: LogState): 'ahead' | 'lost' | 'trimmed' | null {
  if (compareIds(at, s.lastId) > 0) return 'ahead';
  if (compareIds(at, s.maxDeletedId) < 0) return 'trimmed';
  if (s.ownEntry === false && s.length > 0 && compareIds(at, s.firstId) >= 0) return 'lost';
  if (s.entriesAdded === s.length) return null;
  if (s.length === 0) return compareIds(at, s.lastId) === 0 ? null : 'trimmed';
  const a = streamIdParts(at);
  const f = streamIdParts(s.firstId);
  const justBefore = a.ms === f.ms && a.seq === f.seq - 1;
  return compareIds(at, s.firstId) >= 0 || justBefore ? null : 'trimmed';
}

/** What the reader is built from (see `RedisEventLog`). */
export interface ReaderParts {
  /** The caller's client: the reader duplicates it for its own connection. */
  client: RedisClient;
  keys: LogKeys;
  blockMs: number;
  readCount: number;
  newLogId: () => string;
  /** Delivers one read's entries, in order, of the log `logId`. */
  deliver(logId: string, entries: RawEntry[]): void;
  /** The reader lost events: the log was lost, trimmed past the reader, or lost the tail it had read. */
  lost(err: CursorExpiredError, kind: LogLoss): void;
  /** Another server answers than before (a failover to another primary, or a restart): what was read may be gone. */
  primaryChanged(runId: string): void;
  /** A read failed (the reader retries) or the connection reported an error. */
  error(err: unknown): void;
}

/** Where the reader is. */
export interface ReaderPosition {
  logId: string | null;
  lastId: string | null;
  /** `entries-added` of the stream when the reader had read up to `lastId` (approximate while it catches up). */
  read: number;
  errors: number;
  lastError: string | null;
  losses: number;
  /** The `run_id` of the server that answered the last read (null before the first). */
  runId: string | null;
}

export class StreamReader {
  readonly #p: ReaderParts;
  /** The reader's own connection, from `start()` on. */
  #conn: RedisClient | null = null;
  readonly #started: Promise<void>;
  #positioned!: () => void;
  #loop: Promise<void> | null = null;
  #closed = false;
  /** The last read filled its count (more were waiting), and when the last read answered. */
  #full = false;
  #readAt = 0;
  /** When the newest completed read was sent (it saw everything appended before then). */
  #readSentAt = 0;
  /** Ends the pause after a failed read early (on close). */
  #wake: () => void = () => {};
  /** A read completed on the current connection since it was made (a dropped one may come back to another primary). */
  #readOnConnection = false;
  /** Called when a read completes on the current connection (or the reader closes). */
  readonly #currentWaiters = new Set<() => void>();
  readonly position: ReaderPosition = {
    logId: null,
    lastId: null,
    read: 0,
    errors: 0,
    lastError: null,
    losses: 0,
    runId: null,
  };

  constructor(p: ReaderParts) {
    this.#p = p;
    this.#started = new Promise((r) => (this.#positioned = r));
  }

  /** True while the reader's connection is ready. */
  get connected(): boolean {
    return this.#conn?.status === 'ready';
  }

  /**
   * True while connected and the last read, which answered within the last `blockMs` + 5 s, reached
   * the stream's end: this replica has delivered what the log holds, not only kept its connection.
   */
  get caughtUp(): boolean {
    return (
      this.connected && this.#readOnConnection && !this.#full && Date.now() - this.#readAt <= this.#p.blockMs + 5000
    );
  }

  /**
   * Resolves once a read has completed on the reader's current connection (at once when one has),
   * or after `timeoutMs`, or on close. So a position taken after it was checked against the server
   * now answering: a read after a failover finds the lost tail first.
   */
  current(timeoutMs: number): Promise<void> {
    if (this.#readOnConnection || this.#closed) return Promise.resolve();
    return new Promise((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        this.#currentWaiters.delete(done);
        resolve();
      };
      const timer = setTimeout(done, timeoutMs);
      this.#currentWaiters.add(done);
    });
  }

  /** Whether the reader has delivered everything appended before `t` (ms): caught up, by a read sent after it. */
  caughtUpSince(t: number): boolean {
    return this.caughtUp && this.#readSentAt >= t;
  }

  /** Starts reading at the head (once); resolves when the reader knows its start position (or is closed). */
  start(): Promise<void> {
    if (this.#loop || this.#closed) return this.#started;
    this.#loop = this.#run(this.#connect());
    return this.#started;
  }

  #connect(): RedisClient {
    this.#conn?.disconnect();
    const conn = ownConnection(this.#p.client, {
      name: 'event-reader',
      // A blocked read answers within blockMs; the deadline only catches a connection that hangs.
      commandTimeout: this.#p.blockMs + 10_000,
      // While Redis is away, reads wait for the reconnect instead of failing in a loop.
      maxRetriesPerRequest: null,
    });
    conn.on('error', (err: unknown) => this.#failed(err));
    // Dropped: the reconnect may reach another primary (a failover), so nothing read before counts.
    conn.on('close', () => (this.#readOnConnection = false));
    this.#readOnConnection = false;
    this.#conn = conn;
    return conn;
  }

  /** Stops reading and closes the reader's connection. */
  async close(): Promise<void> {
    this.#closed = true;
    this.#positioned();
    this.#wake();
    this.#isCurrent();
    this.#conn?.disconnect();
    await this.#loop;
  }

  #failed(err: unknown): void {
    if (this.#closed) return;
    const message = err instanceof Error ? err.message : String(err);
    this.position.errors++;
    // Reconnect attempts repeat one error: reported when it changes.
    if (message !== this.position.lastError) this.#p.error(err);
    this.position.lastError = message;
  }

  async #run(conn: RedisClient): Promise<void> {
    let failures = 0;
    while (!this.#closed) {
      // A client ioredis gave up on ('end') never reconnects: read on a new one.
      if (conn.status === 'end') conn = this.#connect();
      try {
        await this.#step(conn);
        failures = 0;
        this.position.lastError = null;
        if (conn === this.#conn && conn.status === 'ready') this.#isCurrent();
      } catch (err) {
        if (this.#closed) break;
        this.#failed(err);
        await this.#pause(Math.min(2000, 100 * 2 ** failures++));
      }
    }
  }

  #isCurrent(): void {
    this.#readOnConnection = true;
    for (const done of [...this.#currentWaiters]) done();
  }

  #pause(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const t = setTimeout(resolve, ms);
      this.#wake = () => {
        clearTimeout(t);
        resolve();
      };
    });
  }

  /** One wait and read. */
  async #step(conn: RedisClient): Promise<void> {
    const at = this.position;
    const keys = this.#p.keys;
    if (at.logId === null || at.lastId === null) {
      const s = await readScript(conn, keys, { newLogId: this.#p.newLogId(), epoch: '', after: '0-0', count: 0 });
      Object.assign(at, { logId: s.logId, lastId: s.lastId, read: s.entriesAdded, runId: s.runId });
      this.#readAt = Date.now();
      this.#positioned();
      return;
    }
    // The XREAD only waits (COUNT 1, its answer unused); the script sent behind it on the same
    // connection runs when it returns, and reads with the checks.
    const sentAt = Date.now();
    const wake = conn.xread('COUNT', 1, 'BLOCK', this.#p.blockMs, 'STREAMS', keys.stream, at.lastId);
    const read = readScript(conn, keys, {
      newLogId: this.#p.newLogId(),
      epoch: at.logId,
      after: at.lastId,
      count: this.#p.readCount,
    });
    const [, s] = await Promise.all([wake, read]);
    if (this.#closed) return;
    this.#readAt = Date.now();
    this.#readSentAt = sentAt;
    this.#full = s.entries.length >= this.#p.readCount;
    const moved = at.runId !== null && s.runId !== at.runId;
    at.runId = s.runId;
    if (s.logId !== at.logId) {
      Object.assign(at, { logId: s.logId, lastId: '0-0', read: 0 });
      return this.#lost('the event log was lost (Redis lost its data); a new log started', 'log');
    }
    const expired = whyExpired(at.lastId, s);
    if (expired) {
      // Go on from the head: the listeners' subscribers end, new ones start from the head.
      Object.assign(at, { lastId: s.lastId, read: s.entriesAdded });
      return this.#lost(
        expired === 'trimmed'
          ? "this replica's stream reader fell behind the event log's retention"
          : 'the event log lost entries this replica had read (a Redis failover dropped its newest entries)',
        expired === 'trimmed' ? 'behind' : 'tail',
      );
    }
    // Another primary, and nothing this reader read is missing: its followers still rebuild from it.
    if (moved) this.#p.primaryChanged(s.runId);
    if (s.entries.length === 0) return;
    at.lastId = s.entries.at(-1)![0];
    at.read = s.entries.length < this.#p.readCount ? s.entriesAdded : at.read + s.entries.length;
    this.#p.deliver(s.logId, s.entries);
  }

  #lost(why: string, kind: LogLoss): void {
    this.position.losses++;
    this.#p.lost(new CursorExpiredError('since', why), kind);
  }
}
