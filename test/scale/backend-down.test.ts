/**
 * A backend down while replicas run (issue 29, chaos): the Nomad simulator as a child process,
 * stopped with SIGSTOP (it keeps its sockets and answers nothing, as a hung host does). Exactly one
 * replica watches it, so exactly one watcher backs off; every replica's /readyz says so (the
 * follower shows the holder's published watcher); once it runs again the watcher resumes.
 */
import { startSimulatorProcess, nomadBanner, type SimulatorProcess } from '../../simulators/common/child';
import { startRedisServer, stopRedisServers, type RedisServerUnderTest } from '../support/redis';
import { until } from '../support/until';
import { readyz, startReplica, type Replica } from './support';

describe('a backend down while two replicas run', () => {
  let redis: RedisServerUnderTest;
  let nomad: SimulatorProcess;
  let replicas: Replica[] = [];

  beforeAll(async () => {
    redis = await startRedisServer();
    nomad = await startSimulatorProcess('nomad');
    const { url, managementToken } = nomadBanner(nomad.banner);
    const env = {
      GATEWAY_BACKENDS: `east=nomad@${url}`,
      GATEWAY_BACKEND_EAST_TOKEN: managementToken,
      GATEWAY_BACKEND_EAST_TIMEOUT_MS: '1000',
      GATEWAY_BACKEND_EAST_READ_RETRIES: '0',
      READINESS_PROBE_INTERVAL_MS: '300',
    };
    replicas = await Promise.all(['a', 'b'].map((n) => startReplica(n, redis.url, env)));
  }, 90_000);
  afterAll(async () => {
    nomad?.child.kill('SIGCONT');
    for (const r of replicas) r.child.kill('SIGKILL');
    await nomad?.close();
    await stopRedisServers();
  });

  /** Per replica: its role and the state of the east watcher its /readyz shows. */
  const seen = async (): Promise<Array<{ role: string; watcher: string }>> =>
    Promise.all(
      replicas.map(async (r) => {
        const body = await readyz(r);
        return {
          role: body.replication.backends[0].role as string,
          watcher: body.watchers.find((w: any) => w.backend === 'east')?.watcher?.state as string,
        };
      }),
    );

  it('should have one watcher back off, every /readyz say so, and the watcher resume once the backend is back', async () => {
    let now = '';
    await until(
      async () => {
        const s = await seen();
        now = JSON.stringify(s);
        return s.filter((x) => x.role === 'HOLDER').length === 1 && s.every((x) => x.watcher === 'STREAMING');
      },
      () => `one holder streaming, seen on both (${now})`,
      60_000,
    );
    nomad.child.kill('SIGSTOP');
    await until(
      async () => {
        const s = await seen();
        now = JSON.stringify(s);
        return s.every((x) => x.watcher === 'DEGRADED');
      },
      () => `both replicas to show the watcher DEGRADED (${now})`,
      60_000,
    );
    // Still one holder: a backend down is no reason to hand the watcher over.
    expect((await seen()).filter((x) => x.role === 'HOLDER')).toHaveLength(1);
    nomad.child.kill('SIGCONT');
    await until(
      async () => {
        const s = await seen();
        now = JSON.stringify(s);
        return s.every((x) => x.watcher === 'STREAMING');
      },
      () => `the watcher to resume, seen on both (${now})`,
      60_000,
    );
  }, 180_000);
});
