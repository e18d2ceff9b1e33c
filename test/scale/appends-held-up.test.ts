/**
 * Appends held up, not lost (issue 30's intermittent duplicate): Redis stops taking writes for
 * longer than the gateway's command deadline (`CLIENT PAUSE … WRITE`, as a Cluster refuses every
 * append while the log's slot migrates or its primary fails over), while changes keep coming. The
 * appends time out (they still run once Redis resumes); the holder compares its watcher with the
 * log's view to make the log whole. It must wait for its own appends still queued or in flight: a
 * comparison made while they are held up sends their changes a second time once they land.
 */
import Redis from 'ioredis';
import type { NomadSimulator } from '../../simulators/nomad';
import { disposeAll, seedVolumes, startNomad } from '../support/harness';
import { startRedisServer, stopRedisServers, type RedisServerUnderTest } from '../support/redis';
import { until } from '../support/until';
import {
  created,
  expectEachCreatedOnce,
  holdingWithView,
  loggedCreates,
  nomadBackend,
  SERVICE_TOKEN,
  startReplica,
  subscribe,
  type Replica,
  type Subscriber,
} from './support';

describe('appends held up by Redis', () => {
  let redis: RedisServerUnderTest;
  let admin: Redis;
  let sim: NomadSimulator;
  let r: Replica;
  let sub: Subscriber;

  beforeAll(async () => {
    [redis, sim] = await Promise.all([startRedisServer(), startNomad()]);
    sim.addToken({ secret: SERVICE_TOKEN, management: true });
    seedVolumes(sim, 2);
    // A lease far longer than the pause: the holder keeps it, so only the appends are held up.
    r = await startReplica('a', redis.url, { ...nomadBackend(sim.url), LIVE_LEASE_TTL_MS: '12000' });
    admin = new Redis(redis.url);
  }, 90_000);
  afterAll(async () => {
    await sub?.dispose();
    r?.child.kill('SIGKILL');
    admin?.disconnect();
    await disposeAll();
    await stopRedisServers();
  });

  it('should deliver each change once when appends time out while Redis pauses writes, then run', async () => {
    // Held, and the watcher's first read made the view (on a fresh Redis it is the start, no event).
    await holdingWithView(r);
    sub = await subscribe(r);
    const made: string[] = [];
    let n = 0;
    const create = (): void => void made.push(seedVolumes(sim, 1, 'default', `p${++n}`)[0]!);
    create();
    await until(() => created(sub).length >= 1, 'a first change', 30_000);

    // 5 s: longer than two of the gateway's 2 s command deadlines, so appends queued behind a
    // timed-out one time out too, and the holder's comparison is due while they are held up.
    await admin.call('CLIENT', 'PAUSE', '5000', 'WRITE');
    const flow = setInterval(create, 200);
    await new Promise((resolve) => setTimeout(resolve, 6_000));
    clearInterval(flow);
    create();

    await expectEachCreatedOnce(made, sub);
    expect(await loggedCreates(admin, made)).toEqual(made);
  }, 90_000);
});
