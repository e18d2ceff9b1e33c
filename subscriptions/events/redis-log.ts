/**
 * The event log on a Redis stream, shared by every replica (docs/scaling.md). One stream holds
 * every backend's events, `<keyPrefix>{live}:events`: one order across backends, one Cluster slot
 * for the whole live path (the `{live}` hash tag, so a fenced append reads the lease key and writes
 * the stream in one script) and cursors of one stream id. Its identity, `<keyPrefix>{live}:log-id`,
 * is a random id created with the log; cursors carry it as their epoch, so a cursor of a log Redis
 * lost (a flush, a restart without persistence, a failover that dropped the tail) is
 * CURSOR_EXPIRED, never a silent gap. Cursors are `[logId, ms, seq]` of the stream id.
 *
 * Retention is the in-process log's (`EVENT_LOG_DEFAULTS`), trimmed on append with `MINID ~` at the
 * newer of the age cut and the count cap (whole macro nodes, so a little more is kept; by age only
 * when something is appended, against this process's clock), but never past a hold (`hold`: the
 * position of a backend's newest view snapshot, `<keyPrefix>{live}:holds`). A cursor is good while nothing after it was trimmed, which
 * `XINFO STREAM` tells (Redis 7.0: `recorded-first-entry-id`, `entries-added`, `length`,
 * `max-deleted-entry-id`; see `whyExpired`).
 *
 * Listeners are called by a stream reader (redis-log-reader.ts) on a connection of its own, for
 * every event, this replica's own appends included, in stream order: never inside `append`.
 *
 * The client is the caller's: the log never connects or closes it (only the reader's duplicate).
 */
import { randomBytes } from 'node:crypto';
import { whileSlotMoves, type RedisClient } from '../redis-client';
import { CursorExpiredError } from '../../adapters/contract/errors';
import { decodeCursor, encodeCursor } from './cursor';
import { LeaseLostError } from './errors';
import { EVENT_LOG_DEFAULTS } from './in-process-log';
import type { AppendOptions, EventLog, LogLoss, Replay, ReplayRequest } from './log';
import { StreamReader, streamIdParts, whyExpired } from './redis-log-reader';
import { appendScript, holdScript, readScript, type LogKeys, type RawEntry } from './redis-log-script';
import type { ChangeEvent, ChangeInput } from './types';

/** Options of {@link RedisEventLog}. */
export interface RedisEventLogOptions {
  /** A connected (or connecting) ioredis client; the caller owns its lifecycle. */
  client: RedisClient;
  /** Prefix of the log's keys; replicas sharing the log use the same one. @default 'vg:' */
  keyPrefix?: string;
  /** Most events kept (approximately: `MAXLEN ~`). @default {@link EVENT_LOG_DEFAULTS} (10000) */
  maxEvents?: number;
  /** Longest an event is kept, in ms (approximately, trimmed on append: `MINID ~`). @default {@link EVENT_LOG_DEFAULTS} (900000) */
  retentionMs?: number;
  /**
   * How long a hold ({@link RedisEventLog.hold}) keeps trimming from passing its position unless
   * renewed, in ms; a holder that stopped renewing no longer pins the log.
   * @default the retention (`retentionMs`), at least 60000
   */
  holdMs?: number;
  /** Longest one blocking read of the stream reader waits, in ms. @default 1000 */
  blockMs?: number;
  /** Most entries the stream reader takes per read. @default 500 */
  readCount?: number;
  /** The clock, for retention by age (stream ids carry Redis's clock). @default Date.now */
  now?: () => number;
  /**
   * Called when the reader's read fails (it retries from where it stopped), its connection reports
   * an error (once per distinct message), a listener throws, or an entry is not an event. Must not
   * throw. @default none
   */
  onError?: (op: 'read' | 'listener' | 'entry', err: unknown) => void;
}

/** The log's state for `/readyz` and `/metrics` (see {@link RedisEventLog.status}). */
export interface RedisEventLogStatus {
  /** The reader's connection is ready (false before the first listener or `start()`). */
  connected: boolean;
  /** Connected, and the reader's last read (within about `blockMs`) reached the stream's end. */
  caughtUp: boolean;
  /** The log's id in Redis as last seen; null before the reader started. */
  logId: string | null;
  /** Stream id of the newest entry the reader delivered (or started after); null before it started. */
  lastReadId: string | null;
  /** Entries added to the stream that the reader has not delivered yet (stream lag); null before the reader started or when Redis did not answer. */
  behind: number | null;
  /** Age in ms of the oldest entry the reader has not delivered (0 when caught up), by this process's clock; null as `behind`. */
  oldestUnreadAgeMs: number | null;
  /** Errors the reader met since it started (failed reads, connection errors). */
  errors: number;
  /** The newest of those errors' messages, while the reader has not read successfully since; else null. */
  lastError: string | null;
  /** Times the reader lost events (the log was lost, or trimmed past the reader): each ended its listeners' subscriptions. */
  losses: number;
}

/** The default key prefix: the gateway's (`REDIS_KEY_PREFIX`, the operation store's `DEFAULT_REDIS_KEY_PREFIX`). */
const DEFAULT_KEY_PREFIX = 'vg:';

const newLogId = (): string => randomBytes(9).toString('base64url');

export class RedisEventLog implements EventLog {
  /** The log's Redis keys (for operators and tests). */
  readonly keys: LogKeys;
  readonly #client: RedisClient;
  readonly #maxEvents: number;
  readonly #retentionMs: number;
  readonly #holdMs: number;
  readonly #prefix: string;
  readonly #now: () => number;
  readonly #onError: NonNullable<RedisEventLogOptions['onError']>;
  readonly #listeners = new Set<(e: ChangeEvent) => void>();
  readonly #lostListeners = new Set<(err: CursorExpiredError, kind: LogLoss) => void>();
  readonly #primaryListeners = new Set<(runId: string) => void>();
  readonly #reader: StreamReader;

  constructor(o: RedisEventLogOptions) {
    const prefix = o.keyPrefix ?? DEFAULT_KEY_PREFIX;
    this.#prefix = prefix;
    this.keys = { stream: `${prefix}{live}:events`, logId: `${prefix}{live}:log-id`, holds: `${prefix}{live}:holds` };
    this.#client = o.client;
    this.#maxEvents = o.maxEvents ?? EVENT_LOG_DEFAULTS.maxEvents;
    this.#retentionMs = o.retentionMs ?? EVENT_LOG_DEFAULTS.retentionMs;
    this.#holdMs = o.holdMs ?? Math.max(60_000, this.#retentionMs);
    this.#now = o.now ?? Date.now;
    this.#onError = o.onError ?? (() => {});
    this.#reader = new StreamReader({
      client: o.client,
      keys: this.keys,
      blockMs: o.blockMs ?? 1000,
      readCount: o.readCount ?? 500,
      newLogId,
      deliver: (logId, entries) => this.#deliver(logId, entries),
      lost: (err, kind) => {
        for (const l of this.#lostListeners) this.#call(() => l(err, kind));
      },
      primaryChanged: (runId) => {
        for (const l of this.#primaryListeners) this.#call(() => l(runId));
      },
      error: (err) => this.#onError('read', err),
    });
  }

  async append(change: ChangeInput, options?: AppendOptions): Promise<ChangeEvent> {
    return (await this.appendMany([change], options))[0]!;
  }

  async appendMany(changes: readonly ChangeInput[], options: AppendOptions = {}): Promise<ChangeEvent[]> {
    if (changes.length === 0 && !options.keep) return [];
    // One key per append, the same on every attempt: a re-sent append is not appended twice.
    const onceKey = `${this.#prefix}{live}:append:${randomBytes(9).toString('base64url')}`;
    // On a Cluster, a migration of the log's slot refuses the script (its keys split over two
    // nodes) for as long as it lasts; a refused script did not run, so it is sent again.
    const r = await whileSlotMoves(() =>
      appendScript(this.#client, this.keys, {
        newLogId: newLogId(),
        maxEvents: this.#maxEvents,
        minId: this.#now() - this.#retentionMs,
        now: this.#now(),
        holdMs: this.#holdMs,
        fence: options.fence,
        keep: options.keep,
        onceKey,
        payloads: changes.map((c) => JSON.stringify(c)),
      }),
    );
    if (r === null) throw new LeaseLostError(options.fence!.key);
    return changes.map((c, i) => ({ ...c, cursor: cursorOf(r.logId, r.ids[i]!) }));
  }

  async replay(r: ReplayRequest): Promise<Replay> {
    if (r.since === null) return { events: [], more: false };
    const c = decodeCursor(r.since);
    if (c.ms === undefined)
      throw new CursorExpiredError('since', "the cursor is from one gateway process's event log, not the shared one");
    const limit = Math.max(1, r.limit ?? 1000);
    const s = await readScript(this.#client, this.keys, {
      newLogId: newLogId(),
      epoch: c.epoch,
      after: `${c.ms}-${c.seq}`,
      count: limit + 1,
    });
    if (c.epoch !== s.logId)
      throw new CursorExpiredError('since', 'the event log the cursor is from was lost (Redis lost its data)');
    const expired = whyExpired(`${c.ms}-${c.seq}`, s);
    if (expired === 'ahead')
      throw new CursorExpiredError('since', 'the cursor is ahead of the event log (Redis lost its newest events)');
    if (expired === 'lost')
      throw new CursorExpiredError('since', "the cursor's event is gone (a Redis failover lost the newest events)");
    if (expired === 'trimmed')
      throw new CursorExpiredError('since', "the events after the cursor are past the event log's retention");
    const events = this.#events(s.logId, s.entries.slice(0, limit));
    return { events, more: s.entries.length > limit };
  }

  /**
   * Keeps trimming (by count and by age) from passing `cursor` for `holder` (one position per
   * holder, replaced by the next call) until the holder stops renewing it for `holdMs`: a view
   * snapshot written at `cursor` stays a valid start for the log after it. Answers false, holding
   * nothing, when `cursor` is not of this log (Redis lost it since), names an event a failover lost,
   * or is not of the shared log: a snapshot at it would be no start.
   */
  async hold(holder: string, cursor: string): Promise<boolean> {
    const c = decodeCursor(cursor, 'cursor');
    if (c.ms === undefined) return false;
    return holdScript(this.#client, this.keys, {
      logId: c.epoch,
      holder,
      id: `${c.ms}-${c.seq}`,
      now: this.#now(),
    });
  }

  /**
   * Once the reader runs, the last event it handed to listeners: a subscription's SUBSCRIBED and
   * what this replica's follower view answers stand at the same point, so no event falls between
   * them. Before, the stream's newest entry.
   */
  async head(): Promise<string> {
    const at = this.#reader.position;
    if (at.logId !== null && at.lastId !== null) return cursorOf(at.logId, at.lastId);
    const s = await readScript(this.#client, this.keys, { newLogId: newLogId(), epoch: '', after: '0-0', count: 0 });
    return cursorOf(s.logId, s.lastId);
  }

  /** Whether the stream reader's connection is up (a follower's view is current only while it is). */
  get readerConnected(): boolean {
    return this.#reader.connected;
  }

  /** Whether the stream reader is connected and its last read (within about `blockMs`) reached the stream's end. */
  get readerCaughtUp(): boolean {
    return this.#reader.caughtUp;
  }

  /** Whether the stream reader has delivered every entry appended before `t` (ms since epoch). */
  readerCaughtUpSince(t: number): boolean {
    return this.#reader.caughtUpSince(t);
  }

  /**
   * Resolves once the stream reader has read on its current connection (at once when it has), or
   * after `timeoutMs`; never rejects. A subscription takes its start after it: the reader's
   * position from before a failover may be in a lost tail, found only by its first read after.
   */
  current(timeoutMs: number): Promise<void> {
    return this.#reader.current(timeoutMs);
  }

  /** Starts the stream reader at the head if it has not started; resolves once it knows where it starts. */
  start(): Promise<void> {
    return this.#reader.start();
  }

  /** Starts the stream reader with the first listener (see {@link start}). */
  listen(listener: (e: ChangeEvent) => void, onLost?: (err: CursorExpiredError, kind: LogLoss) => void): () => void {
    const l = (e: ChangeEvent): void => listener(e);
    const lost = onLost && ((err: CursorExpiredError, kind: LogLoss): void => onLost(err, kind));
    this.#listeners.add(l);
    if (lost) this.#lostListeners.add(lost);
    void this.start();
    return () => {
      this.#listeners.delete(l);
      if (lost) this.#lostListeners.delete(lost);
    };
  }

  /**
   * Calls `listener` when the reader finds another server answering (Redis's `run_id` changed: a
   * failover to another primary, or a restart) while nothing it had read is missing; what a replica
   * built from the log before may still be off (another replica's appends lost in the tail).
   */
  onPrimaryChanged(listener: (runId: string) => void): () => void {
    this.#primaryListeners.add(listener);
    return () => this.#primaryListeners.delete(listener);
  }

  /** Stops the reader and closes its connection (not the caller's client). */
  async close(): Promise<void> {
    await this.#reader.close();
  }

  /** The reader's state and lag (one script call on the caller's client); never rejects. */
  async status(): Promise<RedisEventLogStatus> {
    const at = this.#reader.position;
    const out: RedisEventLogStatus = {
      connected: this.#reader.connected,
      caughtUp: this.#reader.caughtUp,
      logId: at.logId,
      lastReadId: at.lastId,
      behind: null,
      oldestUnreadAgeMs: null,
      errors: at.errors,
      lastError: at.lastError,
      losses: at.losses,
    };
    if (at.logId === null || at.lastId === null) return out;
    try {
      const s = await readScript(this.#client, this.keys, {
        newLogId: newLogId(),
        epoch: at.logId,
        after: at.lastId,
        count: 1,
      });
      out.behind = s.logId === at.logId ? Math.max(0, s.entriesAdded - at.read) : s.entriesAdded;
      const oldest = s.logId === at.logId ? s.entries[0]?.[0] : undefined;
      out.oldestUnreadAgeMs = oldest ? Math.max(0, this.#now() - streamIdParts(oldest).ms) : 0;
    } catch (err) {
      out.lastError = err instanceof Error ? err.message : String(err);
    }
    return out;
  }

  #deliver(logId: string, entries: RawEntry[]): void {
    for (const e of this.#events(logId, entries)) for (const l of this.#listeners) this.#call(() => l(e));
  }

  /** Entries as events; an entry that is not one is reported and skipped. */
  #events(logId: string, entries: RawEntry[]): ChangeEvent[] {
    const out: ChangeEvent[] = [];
    for (const [id, fields] of entries) {
      try {
        const payload = fields[fields.indexOf('e') + 1];
        if (payload === undefined || fields.indexOf('e') % 2 !== 0) throw new Error(`stream entry ${id} has no event`);
        out.push({ ...(JSON.parse(payload) as ChangeInput), cursor: cursorOf(logId, id) });
      } catch (err) {
        this.#onError('entry', err);
      }
    }
    return out;
  }

  #call(f: () => void): void {
    try {
      f();
    } catch (err) {
      this.#onError('listener', err);
    }
  }
}

/** The cursor after the stream entry `id` of the log `logId`. */
function cursorOf(logId: string, id: string): string {
  return encodeCursor({ epoch: logId, ...streamIdParts(id) });
}
