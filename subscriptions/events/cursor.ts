/**
 * Event-log cursors: opaque base64url of `[epoch, sequence]`. The epoch names one life of a log
 * (a process start for the in-process log), so a cursor from before a restart is recognized as
 * such instead of being read as a position in the new, empty log.
 */
import { BadUserInputError } from '../../adapters/contract/errors';

export interface CursorParts {
  epoch: string;
  /** Sequence number of the event the cursor follows (0: before the first event). */
  seq: number;
}

export function encodeCursor(c: CursorParts): string {
  return Buffer.from(JSON.stringify([c.epoch, c.seq]), 'utf8').toString('base64url');
}

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
    parsed.length !== 2 ||
    typeof parsed[0] !== 'string' ||
    !/^[A-Za-z0-9_-]{1,64}$/.test(parsed[0]) ||
    !Number.isSafeInteger(parsed[1]) ||
    parsed[1] < 0
  )
    bad();
  const [epoch, seq] = parsed as [string, number];
  return { epoch, seq };
}
