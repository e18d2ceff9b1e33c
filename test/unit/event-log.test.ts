/** The in-process event log: cursors, replay, retention by count and age, epochs across restarts. */
import { BadUserInputError, CursorExpiredError } from '../../adapters/contract/errors';
import { compareCursors, decodeCursor, encodeCursor, InProcessEventLog } from '../../subscriptions/events';
import { statusChange } from '../support/model';

const change = statusChange;

describe('InProcessEventLog', () => {
  it('should replay exactly the events after a cursor, oldest first, in pages', async () => {
    const log = new InProcessEventLog();
    const start = await log.head();
    const events = [];
    for (let i = 1; i <= 5; i++) events.push(await log.append(change(i)));
    expect((await log.replay({ since: start })).events.map((e) => e.volumeId)).toEqual([
      'vol-1',
      'vol-2',
      'vol-3',
      'vol-4',
      'vol-5',
    ]);
    expect((await log.replay({ since: events[2]!.cursor })).events.map((e) => e.volumeId)).toEqual(['vol-4', 'vol-5']);
    expect(await log.replay({ since: events[4]!.cursor })).toEqual({ events: [], more: false });
    const page = await log.replay({ since: start, limit: 2 });
    expect(page).toMatchObject({ more: true, events: [{ volumeId: 'vol-1' }, { volumeId: 'vol-2' }] });
    expect((await log.replay({ since: page.events[1]!.cursor, limit: 2 })).events.map((e) => e.volumeId)).toEqual([
      'vol-3',
      'vol-4',
    ]);
    expect(await log.head()).toBe(events[4]!.cursor);
    expect(await log.replay({ since: null })).toEqual({ events: [], more: false });
  });

  it('should tell listeners every appended event in order and stop after unsubscribing', async () => {
    const log = new InProcessEventLog();
    const seen: string[] = [];
    const stop = log.listen((e) => seen.push(e.volumeId));
    await log.append(change(1));
    await log.append(change(2));
    stop();
    await log.append(change(3));
    expect(seen).toEqual(['vol-1', 'vol-2']);
  });

  it('should answer CURSOR_EXPIRED for a cursor whose following events were dropped by count', async () => {
    const log = new InProcessEventLog({ maxEvents: 3 });
    const start = await log.head();
    const events = [];
    for (let i = 1; i <= 5; i++) events.push(await log.append(change(i)));
    await expect(log.replay({ since: start })).rejects.toBeInstanceOf(CursorExpiredError);
    await expect(log.replay({ since: events[0]!.cursor })).rejects.toMatchObject({ code: 'CURSOR_EXPIRED' });
    // The newest dropped event's own cursor still resumes without a gap.
    expect((await log.replay({ since: events[1]!.cursor })).events.map((e) => e.volumeId)).toEqual([
      'vol-3',
      'vol-4',
      'vol-5',
    ]);
  });

  it('should answer CURSOR_EXPIRED once the events after a cursor are older than retention', async () => {
    let now = 1_000_000;
    const log = new InProcessEventLog({ retentionMs: 60_000, now: () => now });
    const first = await log.append(change(1)); // at 0 s
    now += 30_000;
    const second = await log.append(change(2)); // at 30 s
    now += 30_000;
    await log.append(change(3)); // at 60 s
    now += 15_000; // 75 s: event 1 is past retention, but it is the cursor's own event: no gap
    expect((await log.replay({ since: first.cursor })).events.map((e) => e.volumeId)).toEqual(['vol-2', 'vol-3']);
    now += 20_000; // 95 s: event 2 is past retention too, so resuming after event 1 would skip it
    await expect(log.replay({ since: first.cursor })).rejects.toMatchObject({ code: 'CURSOR_EXPIRED' });
    expect((await log.replay({ since: second.cursor })).events.map((e) => e.volumeId)).toEqual(['vol-3']);
  });

  it('should answer CURSOR_EXPIRED for a cursor from before a restart, never an empty replay', async () => {
    const before = new InProcessEventLog();
    const old = await before.append(change(1));
    const after = new InProcessEventLog();
    await expect(after.replay({ since: old.cursor })).rejects.toMatchObject({ code: 'CURSOR_EXPIRED' });
    // A cursor ahead of the log (another epoch's numbering) is expired too.
    await expect(after.replay({ since: encodeCursor({ epoch: after.epoch, seq: 7 }) })).rejects.toMatchObject({
      code: 'CURSOR_EXPIRED',
    });
  });

  it('should refuse what is not one of its cursors as BAD_USER_INPUT', async () => {
    const log = new InProcessEventLog();
    for (const bad of [
      '',
      'not a cursor!',
      Buffer.from('[1,2]').toString('base64url'),
      Buffer.from('["e",-1]').toString('base64url'),
      'x'.repeat(300),
    ]) {
      await expect(log.replay({ since: bad })).rejects.toBeInstanceOf(BadUserInputError);
    }
    expect(decodeCursor(encodeCursor({ epoch: 'abc', seq: 4 }))).toEqual({ epoch: 'abc', seq: 4 });
  });

  it("should refuse a stream cursor (the Redis log's) with CURSOR_EXPIRED, even with its epoch", async () => {
    const log = new InProcessEventLog({ epoch: 'e1' });
    await log.append(change(1));
    const stream = encodeCursor({ epoch: 'e1', ms: 1_700_000_000_000, seq: 0 });
    await expect(log.replay({ since: stream })).rejects.toBeInstanceOf(CursorExpiredError);
  });
});

describe('cursors', () => {
  it('should keep in-process cursors two parts, carry stream positions as three, and order both', () => {
    const inProcess = encodeCursor({ epoch: 'e1', seq: 7 });
    expect(JSON.parse(Buffer.from(inProcess, 'base64url').toString())).toEqual(['e1', 7]);
    expect(decodeCursor(inProcess)).toEqual({ epoch: 'e1', seq: 7 });
    const stream = { epoch: 'log', ms: 1_764_640_000_123, seq: 2 };
    expect(decodeCursor(encodeCursor(stream))).toEqual(stream);
    expect(compareCursors({ epoch: 'e', seq: 3 }, { epoch: 'e', seq: 10 })).toBeLessThan(0);
    expect(compareCursors(stream, { ...stream, seq: 1 })).toBeGreaterThan(0);
    // A later millisecond orders after, whatever the sequence.
    expect(compareCursors({ ...stream, ms: stream.ms + 1, seq: 0 }, { ...stream, seq: 99 })).toBeGreaterThan(0);
    expect(compareCursors(stream, { ...stream })).toBe(0);
    // Parts beyond exact integers are not cursors.
    const raw = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url');
    expect(() => decodeCursor(raw(['log', 2 ** 53, 0]))).toThrow(BadUserInputError);
    expect(() => decodeCursor(raw(['log', 1, 2 ** 53]))).toThrow(BadUserInputError);
  });
});
