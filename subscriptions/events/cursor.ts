/**
 * Event-log cursors: opaque base64url of `[epoch, sequence]` (the in-process log) or
 * `[epoch, ms, sequence]` (a Redis stream id `ms-sequence`, redis-log.ts). The epoch names one
 * life of a log (a process start for the in-process log, the log id for Redis), so a cursor from
 * before a restart is recognized as such instead of being read as a position in the new, empty log.
 */
import { BadUserInputError } from '../../adapters/contract/errors';

export interface CursorParts {
  epoch: string;
  /** Sequence number of the event the cursor follows (0: before the first event); a stream id's sequence part. */
  seq: number;
  /** A stream id's milliseconds part; absent in the in-process log's cursors. */
  ms?: number;
}

export function encodeCursor(c: CursorParts): string {
  const parts = c.ms === undefined ? [c.epoch, c.seq] : [c.epoch, c.ms, c.seq];
  return Buffer.from(JSON.stringify(parts), 'utf8').toString('base64url');
}

const isPart = (n: unknown): n is number => Number.isSafeInteger(n) && (n as number) >= 0;

/** @throws BadUserInputError for anything that is not a cursor of an event log */
export function decodeCursor(cursor: string, argument = 'since'): CursorParts {
  const bad = (): never => {
    throw new BadUserInputError(`${argument} is not an event cursor issued by this gateway`, argument);
  };
  if (cursor.length === 0 || cursor.length > 200 || !/^[A-Za-z0-9_-]+$/.test(cursor)) bad();
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    return bad();
  }
  if (
    !Array.isArray(parsed) ||
    (parsed.length !== 2 && parsed.length !== 3) ||
    typeof parsed[0] !== 'string' ||
    !/^[A-Za-z0-9_-]{1,64}$/.test(parsed[0]) ||
    !parsed.slice(1).every(isPart)
  )
    bad();
  if ((parsed as unknown[]).length === 2) {
    const [epoch, seq] = parsed as [string, number];
    return { epoch, seq };
  }
  const [epoch, ms, seq] = parsed as [string, number, number];
  return { epoch, ms, seq };
}

/**
 * Orders two cursors' positions (negative, 0, positive, as `Array.prototype.sort` wants): by
 * milliseconds (0 when absent), then sequence. Epochs are not compared: compare cursors of one log.
 */
export function compareCursors(a: CursorParts, b: CursorParts): number {
  return (a.ms ?? 0) - (b.ms ?? 0) || a.seq - b.seq;
}
