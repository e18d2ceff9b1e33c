/**
 * The Redis event log across a failover and a re-sent append (issue 30), against real
 * redis-servers: a cursor whose own entry a failover lost is CURSOR_EXPIRED, never a gap; an
 * append that reaches Redis twice is appended once.
 */
import { Redis } from 'ioredis';
import { ErrorCode } from '../../adapters/contract/errors';
import { decodeCursor, RedisEventLog, type ChangeEvent } from '../../subscriptions/events';
import { appendScript } from '../../subscriptions/events/redis-log-script';
import { statusChange } from '../support/model';
import { freePort, spawnRedis, startRedisServer, stopRedisServers, type RedisServerUnderTest } from '../support/redis';
import { until } from '../support/until';

const change = statusChange;
const ids = (events: ChangeEvent[]): string[] => events.map((e) => e.volumeId);

let redis: RedisServerUnderTest;
let client: Redis;
const logs: RedisEventLog[] = [];
let prefixes = 0;

function newLog(o: { client?: Redis; prefix?: string } = {}): RedisEventLog {
  const log = new RedisEventLog({ client: o.client ?? client, keyPrefix: o.prefix ?? `f${++prefixes}:`, blockMs: 200 });
  logs.push(log);
  return log;
}

function collect(log: RedisEventLog): { events: ChangeEvent[] } {
  const got = { events: [] as ChangeEvent[] };
  log.listen((e) => got.events.push(e));
  return got;
}

async function expectCode(p: Promise<unknown>, code: ErrorCode): Promise<void> {
  await expect(p).rejects.toMatchObject({ code });
}

beforeAll(async () => {
  redis = await startRedisServer();
  client = new Redis(redis.url, { maxRetriesPerRequest: 1, commandTimeout: 2000 });
});
afterEach(async () => {
  await Promise.all(logs.splice(0).map((l) => l.close()));
});
afterAll(async () => {
  client.disconnect();
  await stopRedisServers();
});

describe('RedisEventLog across a failover', () => {
  it('should expire a cursor whose own entry a failover lost (ahead of the new primary, then in a gap of it)', async () => {
    // A real lost tail: the replica is cut off and promoted (as a partition and a failover would)
    // while the old primary still takes appends, which then die with it.
    const primary = await startRedisServer();
    const replicaPort = await freePort();
    const replica = (await spawnRedis(replicaPort, undefined, {
      args: ['--replicaof', '127.0.0.1', String(primary.port)],
    }))!;
    const onPrimary = new Redis(primary.url, { maxRetriesPerRequest: 0, retryStrategy: () => null });
    const onReplica = new Redis(`redis://127.0.0.1:${replicaPort}`, { maxRetriesPerRequest: 1 });
    for (const c of [onPrimary, onReplica]) c.on('error', () => {});
    try {
      const before = newLog({ client: onPrimary, prefix: 'failover:' });
      const got = collect(before);
      await before.start();
      const kept = [await before.append(change(1)), await before.append(change(2))];
      expect(await onPrimary.call('WAIT', 1, 5000)).toBe(1);
      await onReplica.call('REPLICAOF', 'NO', 'ONE');
      const tail = [await before.append(change(3)), await before.append(change(4))];
      await until(() => got.events.length === 4, 'the reader to read the tail');
      await before.close();
      await primary.kill();
      const after = newLog({ client: onReplica, prefix: 'failover:' });
      // The tail is gone: a cursor in it is ahead of the new primary ...
      await expectCode(after.replay({ since: tail[1]!.cursor }), ErrorCode.CursorExpired);
      const next = await after.append(change(5));
      // ... and once newer entries exist, its own entry is missing: expired, never a gap.
      await expectCode(after.replay({ since: tail[0]!.cursor }), ErrorCode.CursorExpired);
      await expectCode(after.replay({ since: tail[1]!.cursor }), ErrorCode.CursorExpired);
      expect(ids((await after.replay({ since: kept[1]!.cursor })).events)).toEqual(['vol-5']);
      expect(decodeCursor(next.cursor).epoch).toBe(decodeCursor(kept[0]!.cursor).epoch);
    } finally {
      replica.child.kill('SIGKILL');
      onPrimary.disconnect();
      onReplica.disconnect();
    }
  });

  it('should answer current() only once its reader has read on the connection made after one dropped (or after the wait)', async () => {
    // A subscription takes its start after current(): before the reader's first read from the
    // server now answering, its position may be in a tail a failover lost.
    const server = await startRedisServer();
    const own = new Redis(server.url, { maxRetriesPerRequest: 1, retryStrategy: () => 100 });
    own.on('error', () => {});
    try {
      const log = newLog({ client: own });
      await log.start();
      const at = Date.now();
      await log.current(5000);
      expect(Date.now() - at).toBeLessThan(1000);
      await server.kill();
      await until(() => !log.readerConnected, 'the reader to lose its connection');
      const away = Date.now();
      await log.current(300);
      expect(Date.now() - away).toBeGreaterThanOrEqual(290);
      let read = false;
      void log.current(30_000).then(() => (read = true));
      await new Promise((r) => setTimeout(r, 300));
      expect(read).toBe(false);
      await server.restart();
      await until(() => read, 'current() to answer after the reader read again', 10_000);
      expect(log.readerConnected).toBe(true);
    } finally {
      own.disconnect();
      await server.kill();
    }
  });

  it('should append a re-sent append once (as ioredis re-sends one in flight when its connection drops), answering the same ids', async () => {
    const log = newLog();
    await log.append(change(1));
    const once = {
      newLogId: 'unused',
      maxEvents: 100,
      minId: 0,
      now: Date.now(),
      holdMs: 60_000,
      onceKey: `${log.keys.logId.replace('log-id', 'append:test')}`,
      payloads: [JSON.stringify(change(2)), JSON.stringify(change(3))],
    };
    const first = await appendScript(client, log.keys, once);
    const again = await appendScript(client, log.keys, once);
    expect(again).toEqual(first);
    expect(await client.xlen(log.keys.stream)).toBe(3);
  });
});
