/**
 * Subscriber demand across replicas (issue 29, item 2). The OpenStack watcher polls only while
 * someone listens; with two replicas it runs on the lease holder, and the only subscriber is on the
 * other replica. Its demand reaches the holder through Redis, so the holder's watcher polls and the
 * follower's subscriber receives the change. Without it the watcher idles and the change never comes.
 * The holder's memory of folded transitions goes with the lease: a hand-over in the middle of an
 * attach ends it with the STATUS_CHANGED the old holder would have sent.
 */
import { Redis } from 'ioredis';
import { OS } from '../support/constants';
import { disposeAll, startOpenStack, type OpenStackUnderTest } from '../support/harness';
import { startRedisServer, stopRedisServers, type RedisServerUnderTest } from '../support/redis';
import { until } from '../support/until';
import { gql, role, startReplica, subscribe, type Received, type Replica, type Subscriber } from './support';

const ATTACH = `mutation($i: AttachVolumeInput!) { attachVolume(input: $i) { operation { id state } } }`;

/** Which replica is HOLDER and which FOLLOWER of the backend, once they agree. */
async function roles(replicas: Replica[]): Promise<{ holder: Replica; follower: Replica }> {
  let seen: Array<string | null> = [];
  await until(
    async () => {
      seen = await Promise.all(replicas.map(role));
      return seen.includes('HOLDER') && seen.includes('FOLLOWER');
    },
    () => `one holder and one follower (roles ${JSON.stringify(seen)})`,
    30_000,
  );
  return { holder: replicas[seen.indexOf('HOLDER')]!, follower: replicas[seen.indexOf('FOLLOWER')]! };
}

describe('OpenStack watcher demand summed across replicas', () => {
  let redis: RedisServerUnderTest;
  let os: OpenStackUnderTest;
  let replicas: Replica[] = [];
  let sub: Subscriber | undefined;

  beforeAll(async () => {
    redis = await startRedisServer();
    os = await startOpenStack();
    const env = {
      GATEWAY_BACKENDS: `os=openstack@${os.keystoneUrl}`,
      GATEWAY_BACKEND_OS_USERNAME: OS.adminUser,
      GATEWAY_BACKEND_OS_PASSWORD: OS.adminPassword,
      GATEWAY_BACKEND_OS_PROJECT_NAME: 'admin',
      GATEWAY_BACKEND_OS_WATCH_FAST_MS: '100',
      GATEWAY_BACKEND_OS_WATCH_SLOW_MS: '300',
    };
    replicas = await Promise.all(['a', 'b'].map((n) => startReplica(n, redis.url, env)));
  }, 90_000);
  afterAll(async () => {
    await sub?.dispose();
    for (const r of replicas) r.child.kill('SIGKILL');
    await disposeAll();
    await stopRedisServers();
  });

  it('should poll on the holder for a subscriber on the other replica, and deliver the change there', async () => {
    const { follower } = await roles(replicas);
    sub = await subscribe(follower, undefined, { 'X-Auth-Token': os.demoToken });
    expect(sub.errors).toEqual([]);
    os.sim.seedVolume({ project: 'demo', name: 'wanted' });
    await until(() => sub!.changes().some((e) => e.type === 'CREATED'), 'the CREATED on the follower', 30_000);
  }, 60_000);

  it('should end an attach handed over mid-way with the STATUS_CHANGED the old holder would have sent, from the status subscribers last saw', async () => {
    const { holder, follower } = await roles(replicas);
    await sub?.dispose();
    sub = await subscribe(follower, undefined, { 'X-Auth-Token': os.demoToken });
    os.sim.setDelays({ attachMs: 3_000, attachCompleteMs: 3_000 });
    const server = os.sim.seedServer({ project: 'demo', name: 'app' });
    const volume = os.sim.seedVolume({ project: 'demo', name: 'handed-over', size: 1 });
    const id = Buffer.from(JSON.stringify(['Volume', 'os', os.demo, volume])).toString('base64url');
    await until(() => sub!.changes().some((e) => e.volumeId === id), 'the CREATED of the volume', 30_000);
    const started = await gql(
      follower,
      ATTACH,
      { 'X-Auth-Token': os.demoToken },
      {
        i: { volumeId: id, target: { server: { serverId: server } } },
      },
    );
    expect(started.errors).toBeUndefined();
    // The holder saw the volume reserved, folded into the gateway's ATTACHING: it remembers the
    // status subscribers last saw (available), and keeps that memory with its appends.
    const probe = new Redis(redis.url);
    try {
      await until(
        async () => ((await probe.get('scale:{live}:transitions:os')) ?? '').includes(`"${id}","AVAILABLE"`),
        'the holder to fold the reserved status',
        30_000,
      );
    } finally {
      probe.disconnect();
    }
    holder.child.kill('SIGKILL');
    const ofVolume = (): Received[] => sub!.changes().filter((e) => e.volumeId === id);
    await until(
      () => ofVolume().some((e) => e.type === 'STATUS_CHANGED'),
      () => `the attach to end on the follower (${JSON.stringify(ofVolume())})`,
      45_000,
    );
    const seen = ofVolume().map((e) => `${e.type} ${e.previousStatus ?? ''}`.trim());
    // Each once: no event doubled or lost by the hand-over.
    expect(seen.map((x) => x.split(' ')[0]).sort()).toEqual(['ATTACHED', 'ATTACHING', 'CREATED', 'STATUS_CHANGED']);
    expect(seen.filter((x) => x.startsWith('STATUS_CHANGED'))).toEqual(['STATUS_CHANGED AVAILABLE']);
  }, 90_000);
});
