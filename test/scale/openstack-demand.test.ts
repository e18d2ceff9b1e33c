/**
 * Subscriber demand across replicas (issue 29, item 2). The OpenStack watcher polls only while
 * someone listens; with two replicas it runs on the lease holder, and the only subscriber is on the
 * other replica. Its demand reaches the holder through Redis, so the holder's watcher polls and the
 * follower's subscriber receives the change. Without it the watcher idles and the change never comes.
 */
import { OS } from '../support/constants';
import { disposeAll, startOpenStack, type OpenStackUnderTest } from '../support/harness';
import { startRedisServer, stopRedisServers, type RedisServerUnderTest } from '../support/redis';
import { until } from '../support/until';
import { role, startReplica, subscribe, type Replica, type Subscriber } from './support';

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
    let roles: Array<string | null> = [];
    await until(
      async () => {
        roles = await Promise.all(replicas.map(role));
        return roles.includes('HOLDER') && roles.includes('FOLLOWER');
      },
      () => `one holder and one follower (roles ${JSON.stringify(roles)})`,
      30_000,
    );
    const follower = replicas[roles.indexOf('FOLLOWER')]!;
    sub = await subscribe(follower, undefined, { 'X-Auth-Token': os.demoToken });
    expect(sub.errors).toEqual([]);
    os.sim.seedVolume({ project: 'demo', name: 'wanted' });
    await until(() => sub!.changes().some((e) => e.type === 'CREATED'), 'the CREATED on the follower', 30_000);
  }, 60_000);
});
