/**
 * Reads the operations stream (`<prefix>{live}:operations`, written by every replica's fenced
 * writes) with `XREAD BLOCK` on a connection of its own: the shared client's command deadline would
 * cut a blocking read. Every replica reads every entry (no consumer group), in order.
 *
 * A reader that was away (the connection dropped: RedisClient restarted, or the network) may have missed
 * entries, which the stream may also have trimmed or lost meanwhile; so after a reconnect it asks
 * for a resync (the tracker re-reads the records its listeners wait on) before it goes on.
 */
import { ownConnection, type RedisClient } from '../redis-client';
import type { OperationKeys } from './redis-keys';
import type { OperationRecord } from '../../adapters/contract/model';

/** One stored change, as the stream carries it. */
export interface OperationChange {
  record: OperationRecord;
  version: number;
  /** The replica that wrote it. */
  writer: string;
}

/** Options of {@link OperationChangeReader}. */
export interface OperationChangeReaderOptions {
  /** The shared client, duplicated for the blocking read (the reader owns the duplicate). */
  client: RedisClient;
  keys: OperationKeys;
  /** Each batch of changes, in stream order. Must not throw. */
  onChanges: (changes: OperationChange[]) => void;
  /**
   * After the reader was away, before the changes read next, once the shared client is ready too
   * (the write-back goes through it). Resolving false asks for it again at the next read.
   */
  onResync: () => Promise<boolean | void>;
  /** How long one `XREAD` blocks. @default 5000 */
  blockMs?: number;
  /** Called when a read fails (retried after a short pause). Must not throw. @default none */
  onError?: (err: unknown) => void;
}

/** Pause after a failed read. */
const RETRY_MS = 500;

function parse(fields: string[]): OperationChange | null {
  const f = new Map<string, string>();
  for (let i = 0; i + 1 < fields.length; i += 2) f.set(fields[i]!, fields[i + 1]!);
  const j = f.get('j');
  if (!j) return null;
  return { record: JSON.parse(j) as OperationRecord, version: Number(f.get('v')), writer: f.get('w') ?? '' };
}

export class OperationChangeReader {
  readonly #o: OperationChangeReaderOptions;
  readonly #blockMs: number;
  #conn: RedisClient | null = null;
  #closed = false;
  #away = false;
  /** Id of the last entry read; null until the head was read. */
  #last: string | null = null;
  #loop: Promise<void> | null = null;
  /** Ends the pause after a failed read at once on close. */
  #wake: (() => void) | null = null;

  constructor(o: OperationChangeReaderOptions) {
    this.#o = o;
    this.#blockMs = o.blockMs ?? 5000;
  }

  start(): void {
    if (this.#conn) return;
    this.#loop = this.#run(this.#connect());
  }

  #connect(): RedisClient {
    this.#conn?.disconnect();
    const conn = ownConnection(this.#o.client, {
      name: 'operations',
      commandTimeout: this.#blockMs + 5000,
      // Fail at once while disconnected (retried below) rather than wait in a queue that a close
      // while reconnecting would never flush.
      enableOfflineQueue: false,
    });
    // The shared client logs Redis trouble; this one only notes that it was away.
    conn.on('error', () => {});
    conn.on('reconnecting', () => (this.#away = true));
    this.#conn = conn;
    return conn;
  }

  /** Stops reading and closes the connection. Never rejects. */
  async close(): Promise<void> {
    this.#closed = true;
    this.#conn?.disconnect();
    this.#wake?.();
    await this.#loop;
  }

  /** Resyncs if the reader was away and the shared client is back (its own reconnect may lag this one's). */
  async #resync(): Promise<void> {
    if (!this.#away || this.#o.client.status !== 'ready') return;
    this.#away = false;
    if ((await this.#o.onResync()) === false) this.#away = true;
  }

  async #run(conn: RedisClient): Promise<void> {
    const stream = this.#o.keys.stream;
    while (!this.#closed) {
      // A client ioredis gave up on ('end') never reconnects: read on a new one.
      if (conn.status === 'end') {
        conn = this.#connect();
        this.#away = true;
      }
      try {
        // Only entries after the head as first seen (or after a loss, below): older ones are history.
        if (this.#last === null) {
          const head = await conn.xrevrange(stream, '+', '-', 'COUNT', 1);
          this.#last = head[0]?.[0] ?? '0-0';
        }
        // Back on a ready connection: resync now, not after a read that may block for blockMs.
        if (conn.status === 'ready') await this.#resync();
        const reply = await conn.xread('COUNT', 500, 'BLOCK', this.#blockMs, 'STREAMS', stream, this.#last);
        if (this.#closed) return;
        await this.#resync();
        const entries = reply?.[0]?.[1] ?? [];
        if (entries.length === 0) continue;
        this.#last = entries[entries.length - 1]![0];
        const changes = entries.map(([, fields]) => parse(fields)).filter((c): c is OperationChange => c !== null);
        this.#o.onChanges(changes);
      } catch (err) {
        if (this.#closed) return;
        this.#away = true;
        this.#o.onError?.(err);
        await new Promise<void>((resolve) => {
          const t = setTimeout(resolve, RETRY_MS);
          this.#wake = () => (clearTimeout(t), resolve());
        });
      }
    }
  }
}
