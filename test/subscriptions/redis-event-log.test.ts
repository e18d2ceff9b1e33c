/**
 * The event log on a Redis stream (issue 29, item 1) against a real redis-server (no persistence):
 * two logs on one Redis are one log; retention by count and age expires old cursors; a flush or a
 * restart of Redis expires every cursor of the lost log and tells listeners; fenced appends write
 * only under their lease; garbage cursors are BAD_USER_INPUT; the reader survives Redis going away.
 */
import { Redis } from 'ioredis';
import { BadUserInputError, CursorExpiredError, ErrorCode } from '../../adapters/contract/errors';
import {
  encodeCursor,
  decodeCursor,
  LeaseLostError,
  RedisEventLog,
  type ChangeEvent,
  type RedisEventLogOptions,
} from '../../subscriptions/events';
import { statusChange } from '../support/model';
import { startRedisServer, stopRedisServers, type RedisServerUnderTest } from '../support/redis';
import { until } from '../support/until';

const change = statusChange;

const ids = (events: ChangeEvent[]): string[] => events.map((e) => e.volumeId);

let redis: RedisServerUnderTest;
let client: Redis;
const logs: RedisEventLog[] = [];
const errors: unknown[] = [];
const unhandled: unknown[] = [];
const onUnhandled = (err: unknown): void => void unhandled.push(err);
let prefixes = 0;

/** A log on its own key prefix (or `prefix`, to share one), with short blocking reads. */
function newLog(o: Partial<RedisEventLogOptions> & { prefix?: string } = {}): RedisEventLog {
  const log = new RedisEventLog({
    client,
    keyPrefix: o.prefix ?? `t${++prefixes}:`,
    blockMs: 200,
    onError: (_op, err) => errors.push(err),
    ...o,
  });
  logs.push(log);
  return log;
}

/** Listens, collecting events and losses. */
function collect(log: RedisEventLog): { events: ChangeEvent[]; lost: CursorExpiredError[] } {
  const got = { events: [] as ChangeEvent[], lost: [] as CursorExpiredError[] };
  log.listen(
    (e) => got.events.push(e),
    (err) => got.lost.push(err),
  );
  return got;
}

async function expectCode(p: Promise<unknown>, code: ErrorCode): Promise<void> {
  await expect(p).rejects.toMatchObject({ code });
}

beforeAll(async () => {
  process.on('unhandledRejection', onUnhandled);
  redis = await startRedisServer();
  client = new Redis(redis.url, { maxRetriesPerRequest: 1, commandTimeout: 2000 });
  // Approximate trimming drops whole macro nodes: small nodes make it act on a few entries.
  await client.config('SET', 'stream-node-max-entries', '4');
});

afterEach(async () => {
  await Promise.all(logs.splice(0).map((l) => l.close()));
});

afterAll(async () => {
  client.disconnect();
  await stopRedisServers();
  process.off('unhandledRejection', onUnhandled);
  expect(unhandled).toEqual([]);
});

describe('RedisEventLog', () => {
  it('should be one log for two instances: cursors of one replay on the other, and both listeners get every event once, in order, their own included', async () => {
    const prefix = 'shared:';
    const a = newLog({ prefix });
    const b = newLog({ prefix });
    const onA = collect(a);
    const onB = collect(b);
    await Promise.all([a.start(), b.start()]);
    const start = await b.head();
    const appended: ChangeEvent[] = [];
    for (let i = 1; i <= 6; i++) appended.push(await (i % 2 ? a : b).append(change(i)));
    appended.push(...(await a.appendMany([change(7), change(8)])));
    const all = ['vol-1', 'vol-2', 'vol-3', 'vol-4', 'vol-5', 'vol-6', 'vol-7', 'vol-8'];
    await until(() => onA.events.length >= 8 && onB.events.length >= 8, 'both listeners to get 8 events');
    expect(ids(onA.events)).toEqual(all);
    expect(ids(onB.events)).toEqual(all);
    // The listeners' cursors are the appends' cursors, and the events are the changes as appended.
    expect(onB.events.map((e) => e.cursor)).toEqual(appended.map((e) => e.cursor));
    expect(onA.events[3]).toEqual(appended[3]);
    expect(ids((await b.replay({ since: appended[2]!.cursor })).events)).toEqual(all.slice(3));
    expect(ids((await a.replay({ since: start })).events)).toEqual(all);
    const page = await b.replay({ since: start, limit: 3 });
    expect({ ids: ids(page.events), more: page.more }).toEqual({ ids: all.slice(0, 3), more: true });
    expect(await a.replay({ since: appended[7]!.cursor })).toEqual({ events: [], more: false });
    expect(await a.head()).toBe(appended[7]!.cursor);
    expect(await b.head()).toBe(appended[7]!.cursor);
    expect(decodeCursor(appended[0]!.cursor)).toMatchObject({ epoch: decodeCursor(start).epoch, seq: 0 });
    expect(onA.lost).toEqual([]);
    const status = await a.status();
    expect(status).toMatchObject({ connected: true, caughtUp: true, behind: 0, oldestUnreadAgeMs: 0, losses: 0 });
    expect(status.lastReadId).toBe(`${decodeCursor(appended[7]!.cursor).ms}-${decodeCursor(appended[7]!.cursor).seq}`);
  });

  it('should expire a cursor whose following events were trimmed by count, while a newer one and one in an id gap still replay', async () => {
    const log = newLog({ maxEvents: 4 });
    const start = await log.head();
    const appended: ChangeEvent[] = [];
    for (let i = 1; i <= 20; i++) appended.push(await log.append(change(i)));
    expect(await client.xlen(log.keys.stream)).toBeLessThan(12);
    await expectCode(log.replay({ since: start }), ErrorCode.CursorExpired);
    await expectCode(log.replay({ since: appended[0]!.cursor }), ErrorCode.CursorExpired);
    expect(ids((await log.replay({ since: appended[17]!.cursor })).events)).toEqual(['vol-19', 'vol-20']);
    // The id gap: stream ids are not dense, so a cursor between the last trimmed entry and the
    // first kept one names no entry. The id just before the first kept one is good (nothing after
    // it was trimmed); the one before that, or the last trimmed entry's, is not.
    const info = (await client.xinfo('STREAM', log.keys.stream)) as unknown[];
    const first = String(info[info.indexOf('recorded-first-entry-id') + 1]);
    const [ms, seq] = first.split('-').map(Number) as [number, number];
    const epoch = decodeCursor(start).epoch;
    const firstIndex = appended.findIndex(
      (e) => decodeCursor(e.cursor).ms === ms && decodeCursor(e.cursor).seq === seq,
    );
    expect(firstIndex).toBeGreaterThan(0);
    const kept = ids(appended.slice(firstIndex));
    if (seq > 0)
      expect(ids((await log.replay({ since: encodeCursor({ epoch, ms, seq: seq - 1 }) })).events)).toEqual(kept);
    await expectCode(log.replay({ since: encodeCursor({ epoch, ms: ms - 1, seq: 7 }) }), ErrorCode.CursorExpired);
    // The last trimmed entry: good only when its id is the one just before the first kept (same ms).
    const lastTrimmed = decodeCursor(appended[firstIndex - 1]!.cursor);
    if (lastTrimmed.ms === ms && lastTrimmed.seq === seq - 1)
      expect(ids((await log.replay({ since: appended[firstIndex - 1]!.cursor })).events)).toEqual(kept);
    else await expectCode(log.replay({ since: appended[firstIndex - 1]!.cursor }), ErrorCode.CursorExpired);
    expect(ids((await log.replay({ since: appended[firstIndex]!.cursor })).events)).toEqual(kept.slice(1));
  });

  it('should expire a cursor whose following events were trimmed by age', async () => {
    const retentionMs = 300;
    const log = newLog({ retentionMs });
    const old: ChangeEvent[] = [];
    for (let i = 1; i <= 9; i++) old.push(await log.append(change(i)));
    const oldAt = Date.now();
    await until(() => Date.now() > oldAt + retentionMs + 50, 'the old events to pass retention');
    const fresh = [await log.append(change(10)), await log.append(change(11))];
    await expectCode(log.replay({ since: old[0]!.cursor }), ErrorCode.CursorExpired);
    expect(ids((await log.replay({ since: fresh[0]!.cursor })).events)).toEqual(['vol-11']);
    expect(await client.xlen(log.keys.stream)).toBeLessThan(8);
  });

  it('should not trim past a hold, by count or by age, until it moves on or goes stale; a new log drops the old holds', async () => {
    let now = Date.now();
    const log = newLog({ maxEvents: 4, retentionMs: 1000, holdMs: 5000, now: () => now });
    const appended: ChangeEvent[] = [];
    for (let i = 1; i <= 3; i++) appended.push(await log.append(change(i)));
    expect(await log.hold('east', appended[1]!.cursor)).toBe(true);
    for (let i = 4; i <= 30; i++) appended.push(await log.append(change(i)));
    // Count: 30 events against a cap of 4, and still everything after the hold replays.
    expect(ids((await log.replay({ since: appended[1]!.cursor, limit: 100 })).events)).toEqual(ids(appended.slice(2)));
    // Age: past the retention, the held position still replays.
    now += 3000;
    appended.push(await log.append(change(31)));
    expect(ids((await log.replay({ since: appended[1]!.cursor, limit: 100 })).events)).toHaveLength(29);
    // The holder moves on: trimming follows it.
    expect(await log.hold('east', appended[25]!.cursor)).toBe(true);
    appended.push(await log.append(change(32)));
    await expectCode(log.replay({ since: appended[1]!.cursor }), ErrorCode.CursorExpired);
    expect(ids((await log.replay({ since: appended[25]!.cursor })).events)).toEqual(ids(appended.slice(26)));
    // A hold not renewed for holdMs no longer pins the log, and is dropped.
    now += 6000;
    appended.push(await log.append(change(33)));
    await expectCode(log.replay({ since: appended[25]!.cursor }), ErrorCode.CursorExpired);
    expect(await client.hlen(log.keys.holds)).toBe(0);
    // A hold in a log Redis lost holds nothing, and a new log starts without the old holds.
    expect(await log.hold('east', appended[32]!.cursor)).toBe(true);
    await client.del(log.keys.logId);
    expect(await log.hold('west', appended[32]!.cursor)).toBe(false);
    await log.append(change(34));
    expect(await client.hlen(log.keys.holds)).toBe(0);
  });

  it('should report in status() how far the reader is behind the head and how old the oldest unread event is', async () => {
    const a = newLog({ prefix: 'lag:' });
    const b = newLog({ prefix: 'lag:' });
    const onB = collect(b);
    expect(await b.status()).toMatchObject({ connected: false, logId: null, behind: null, oldestUnreadAgeMs: null });
    await b.start();
    await a.append(change(1));
    await until(() => onB.events.length === 1, 'the first event');
    expect(await b.status()).toMatchObject({ connected: true, behind: 0, oldestUnreadAgeMs: 0, errors: 0 });
    // A reader that stopped (here: closed) falls behind what the other log appends.
    await b.close();
    const firstUnread = Date.now();
    await a.appendMany([change(2), change(3), change(4)]);
    await until(() => Date.now() >= firstUnread + 50, '50 ms to pass');
    const status = await b.status();
    expect(status).toMatchObject({ connected: false, behind: 3 });
    expect(status.oldestUnreadAgeMs).toBeGreaterThanOrEqual(40);
    expect(status.oldestUnreadAgeMs).toBeLessThan(60_000);
  });

  it('should call the reader caught up only while its last read reached the end of the stream', async () => {
    const log = newLog({ readCount: 2 });
    const seen: boolean[] = [];
    log.listen(() => seen.push(log.readerCaughtUp));
    await log.start();
    await until(() => log.readerCaughtUp, 'the reader to connect');
    await log.appendMany([1, 2, 3, 4, 5, 6, 7, 8, 9].map(change));
    await until(() => seen.length === 9, 'nine events');
    // Reads of 2, 2, 2, 2 (full: more may wait), then 1.
    expect(seen).toEqual([false, false, false, false, false, false, false, false, true]);
    expect((await log.status()).caughtUp).toBe(true);
  });

  it('should write a fenced append only while the lease key holds its token, and reject it with LEASE_LOST otherwise', async () => {
    const log = newLog();
    const lease = `${log.keys.logId.replace('log-id', 'lease:east')}`;
    const first = await log.append(change(1));
    await client.set(lease, 'token-1');
    const wrong = log.append(change(2), { fence: { key: lease, token: 'token-0' } });
    await expect(wrong).rejects.toBeInstanceOf(LeaseLostError);
    await expect(wrong).rejects.toMatchObject({ code: 'LEASE_LOST', key: lease });
    await expect(log.appendMany([change(3), change(4)], { fence: { key: lease, token: '' } })).rejects.toMatchObject({
      code: 'LEASE_LOST',
    });
    await client.del(lease);
    await expect(log.append(change(5), { fence: { key: lease, token: 'token-1' } })).rejects.toMatchObject({
      code: 'LEASE_LOST',
    });
    expect(await client.xlen(log.keys.stream)).toBe(1);
    await client.set(lease, 'token-1');
    await log.append(change(6), { fence: { key: lease, token: 'token-1' } });
    expect(ids((await log.replay({ since: first.cursor })).events)).toEqual(['vol-6']);
  });

  it('should answer BAD_USER_INPUT for garbage cursors and CURSOR_EXPIRED for an in-process cursor', async () => {
    const log = newLog();
    const epoch = decodeCursor(await log.head()).epoch;
    const json = (v: unknown): string => Buffer.from(JSON.stringify(v)).toString('base64url');
    for (const since of [
      '',
      'not a cursor!',
      json({ epoch, seq: 1 }),
      json([epoch, 1, 2, 3]),
      json([epoch, -1, 0]),
      json([epoch, 1.5, 0]),
      json([epoch, 2 ** 60, 0]),
      json([epoch, 1, Number.MAX_SAFE_INTEGER + 2]),
      json([42, 1, 0]),
    ]) {
      await expect(log.replay({ since })).rejects.toBeInstanceOf(BadUserInputError);
    }
    await expectCode(log.replay({ since: encodeCursor({ epoch, seq: 0 }) }), ErrorCode.CursorExpired);
    await expectCode(log.replay({ since: encodeCursor({ epoch: 'other', ms: 1, seq: 0 }) }), ErrorCode.CursorExpired);
    // Ahead of the log: another log's position.
    await expectCode(
      log.replay({ since: encodeCursor({ epoch, ms: Date.now() + 3_600_000, seq: 0 }) }),
      ErrorCode.CursorExpired,
    );
  });

  it('should expire every cursor of a log Redis lost (FLUSHALL, then a restart), tell listeners, and go on in a new log', async () => {
    const a = newLog({ prefix: 'lost:' });
    const b = newLog({ prefix: 'lost:' });
    const onA = collect(a);
    await a.start();
    const before = await b.append(change(1));
    await until(() => onA.events.length === 1, 'the first event');

    await client.flushall();
    await expectCode(b.replay({ since: before.cursor }), ErrorCode.CursorExpired);
    const afterFlush = await b.append(change(2));
    expect(decodeCursor(afterFlush.cursor).epoch).not.toBe(decodeCursor(before.cursor).epoch);
    await until(
      () => onA.lost.length === 1 && onA.events.length === 2,
      () => `a loss and the next event: ${JSON.stringify({ lost: onA.lost.length, events: ids(onA.events) })}`,
    );
    expect(onA.lost[0]).toBeInstanceOf(CursorExpiredError);
    expect(onA.events[1]!.cursor).toBe(afterFlush.cursor);

    // A restart without persistence: the reader reconnects, finds the new log and says so.
    await redis.restart();
    await client.config('SET', 'stream-node-max-entries', '4');
    await until(async () => (await a.status()).connected, 'the reader to reconnect');
    await expectCode(b.replay({ since: afterFlush.cursor }), ErrorCode.CursorExpired);
    const afterRestart = await b.append(change(3));
    await until(
      () => onA.lost.length === 2 && onA.events.length === 3,
      () => `a second loss and the third event: ${onA.lost.length}, ${ids(onA.events).join()}`,
    );
    expect(ids(onA.events)).toEqual(['vol-1', 'vol-2', 'vol-3']);
    expect(onA.events[2]!.cursor).toBe(afterRestart.cursor);
    expect(ids((await a.replay({ since: await a.head() })).events)).toEqual([]);
  });

  it('should treat a stream whose log id is gone (evicted, deleted) as lost: its cursors expire and a new log starts empty', async () => {
    const log = newLog();
    const first = await log.append(change(1));
    await log.append(change(2));
    await client.del(log.keys.logId);
    await expectCode(log.replay({ since: first.cursor }), ErrorCode.CursorExpired);
    expect(await client.xlen(log.keys.stream)).toBe(0);
    const head = await log.head();
    expect(decodeCursor(head)).toMatchObject({ ms: 0, seq: 0 });
    expect(decodeCursor(head).epoch).not.toBe(decodeCursor(first.cursor).epoch);
    await log.append(change(3));
    expect(ids((await log.replay({ since: head })).events)).toEqual(['vol-3']);
  });

  it('should keep reading across a Redis kill and restart: errors reported, none unhandled, and it resumes with what was appended after', async () => {
    const a = newLog({ prefix: 'kill:' });
    const onA = collect(a);
    await a.start();
    await a.append(change(1));
    await until(() => onA.events.length === 1, 'the first event');
    const errorsBefore = errors.length;
    await redis.kill();
    await until(async () => !(await a.status()).connected, 'the reader to see Redis gone');
    await expect(a.append(change(2))).rejects.toThrow();
    const down = await a.status();
    expect(down).toMatchObject({ connected: false, behind: null });
    await redis.restart();
    await client.config('SET', 'stream-node-max-entries', '4');
    await until(async () => (await a.status()).connected, 'the reader to reconnect');
    const next = await a.append(change(3));
    await until(
      () => onA.events.length === 2,
      () => `the event after the restart: ${ids(onA.events).join()}`,
    );
    expect(onA.events[1]!.cursor).toBe(next.cursor);
    expect(onA.lost).toHaveLength(1);
    expect(errors.length).toBeGreaterThan(errorsBefore);
    expect(unhandled).toEqual([]);
  });
});
