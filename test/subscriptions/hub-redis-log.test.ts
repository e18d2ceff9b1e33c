/**
 * The live hub with the Redis event log (issue 29): a real Nomad simulator and watcher, the real
 * schema, a RedisEventLog on a real redis-server. The log's listener runs behind its replay (a
 * stream reader), which the hub must not turn into duplicates, and a log Redis lost ends the
 * subscriptions with CURSOR_EXPIRED instead of leaving a gap.
 */
import { Redis } from 'ioredis';
import type { CursorExpiredError } from '../../adapters/contract/errors';
import type { NomadSimulator } from '../../simulators/nomad';
import { RedisEventLog, type ChangeEvent, type LogLoss } from '../../subscriptions/events';
import { disposeAll, MGMT, seedVolumes, startNomad } from '../support/harness';
import { startRedisServer, stopRedisServers, type RedisServerUnderTest } from '../support/redis';
import { events, startLive, until, type LiveUnderTest } from './live-helpers';

const ALL = `subscription { volumeChanged { type cursor volumeId volume { name status } } }`;

let sim: NomadSimulator;
let live: LiveUnderTest | undefined;

const names = (s: { results: any[] }): string[] =>
  events(s)
    .filter((e) => e.type === 'CREATED')
    .map((e) => e.volume.name);

beforeEach(async () => {
  sim = await startNomad();
});

afterEach(async () => {
  await live?.stop();
  live = undefined;
  await disposeAll();
});

describe('with the Redis event log', () => {
  let redis: RedisServerUnderTest;
  let client: Redis;
  let logs = 0;

  /** The Redis log whose listener can be held back, as a stream reader behind the head is. */
  class LaggingLog extends RedisEventLog {
    held: Array<() => void> | null = null;
    override listen(
      listener: (e: ChangeEvent) => void,
      onLost?: (err: CursorExpiredError, kind: LogLoss) => void,
    ): () => void {
      return super.listen((e) => (this.held ? this.held.push(() => listener(e)) : listener(e)), onLost);
    }
    release(): void {
      const held = this.held ?? [];
      this.held = null;
      for (const f of held) f();
    }
  }

  const startWithLog = async (): Promise<LaggingLog> => {
    const log = new LaggingLog({ client, keyPrefix: `hub${++logs}:`, blockMs: 200 });
    live = await startLive([{ id: 'east', url: sim.url, token: MGMT }], { logInstance: log });
    await log.start();
    return log;
  };

  beforeAll(async () => {
    redis = await startRedisServer();
    client = new Redis(redis.url, { maxRetriesPerRequest: 1, commandTimeout: 2000 });
  });
  afterAll(async () => {
    client.disconnect();
    await stopRedisServers();
  });

  it('delivers once what the replay read before the listener was told of it', async () => {
    const log = await startWithLog();
    const full = await live!.subscribe(ALL, {}, { east: MGMT });
    seedVolumes(sim, 2, 'default', 'early');
    await until(() => names(full).length === 2, 'two volumes');
    const since = events(full)[1]!.cursor;
    log.held = [];
    seedVolumes(sim, 2, 'default', 'late');
    await until(async () => (await log.replay({ since })).events.length === 3, 'the late volumes in the log');
    const withSince = await live!.subscribe(
      `subscription($since: String) { volumeChanged(since: $since) { type cursor } }`,
      { since },
      { east: MGMT },
    );
    await until(() => events(withSince).length === 4, 'SUBSCRIBED and the replay');
    log.release();
    await until(() => names(full).length === 4, 'the held events to reach the first subscriber');
    seedVolumes(sim, 1, 'default', 'after');
    await until(() => names(full).length === 5, 'the last volume');
    await until(() => events(withSince).length >= 5, 'the last volume on the resumed subscription');
    const cursors = (s: any) =>
      events(s)
        .filter((e) => e.type !== 'SUBSCRIBED')
        .map((e) => e.cursor);
    expect(cursors(withSince)).toEqual(cursors(full).slice(1));
    await log.close();
  });

  it('ends event subscriptions with CURSOR_EXPIRED when Redis loses the log', async () => {
    const log = await startWithLog();
    const s = await live!.subscribe(ALL, {}, { east: MGMT });
    seedVolumes(sim, 1, 'default', 'before');
    await until(() => names(s).length === 1, 'the first volume');
    await client.flushall();
    seedVolumes(sim, 1, 'default', 'after');
    await until(() => s.done, 'the subscription to end');
    expect(s.results.at(-1).errors[0].extensions.code).toBe('CURSOR_EXPIRED');
    expect(names(s)).toEqual(['before 0']);
    expect(live!.hub.counts()).toMatchObject({ volumeChanged: 0 });
    await log.close();
  });
});
