/**
 * A Redis Cluster with a password and TLS (issue 30: "the same TLS and auth options for each"):
 * three primaries with `requirepass`, TLS only (plain ports closed; the Cluster bus and replication
 * over TLS; certificates from a test CA made by openssl). A gateway given REDIS_CLUSTER_NODES,
 * REDIS_PASSWORD, REDIS_TLS and REDIS_TLS_CA_FILE delivers changes, and follows the `{live}` slot
 * when it moves to another primary (MIGRATE with AUTH). In `npm run test:redis-ha`.
 */
import type { NomadSimulator } from '../../simulators/nomad';
import { LIVE_SLOT } from '../../server/redis';
import { disposeAll, seedVolumes, startNomad } from '../support/harness';
import { stopRedisServers } from '../support/redis';
import { startRedisCluster, type RedisClusterUnderTest } from '../support/redis-cluster';
import { until } from '../support/until';
import { at, makeCertificates, removeCertificates } from '../server/tls-helpers';
import {
  created,
  expectEachCreatedOnce,
  holdingWithView,
  nomadBackend,
  readyz,
  SERVICE_TOKEN,
  startReplica,
  subscribe,
  type Replica,
  type Subscriber,
} from '../scale/support';

const PASSWORD = 'cluster-nodes-secret';

describe('a gateway on a Redis Cluster with a password and TLS', () => {
  let cluster: RedisClusterUnderTest;
  let sim: NomadSimulator;
  let r: Replica;
  let sub: Subscriber;

  beforeAll(async () => {
    makeCertificates();
    [cluster, sim] = await Promise.all([
      startRedisCluster({
        password: PASSWORD,
        tls: {
          cert: at('server-1.crt'),
          key: at('server-1.key'),
          ca: at('ca.crt'),
          clientCert: at('client.crt'),
          clientKey: at('client.key'),
        },
      }),
      startNomad(),
    ]);
    sim.addToken({ secret: SERVICE_TOKEN, management: true });
    r = await startReplica('a', cluster.env, nomadBackend(sim.url));
  }, 90_000);
  afterAll(async () => {
    await sub?.dispose();
    r?.child.kill('SIGKILL');
    await disposeAll();
    await stopRedisServers();
    removeCertificates();
  });

  it('should deliver changes over TLS and follow the {live} slot to another primary', async () => {
    expect(cluster.env).toMatchObject({ REDIS_TLS: 'true', REDIS_PASSWORD: PASSWORD });
    await holdingWithView(r);
    expect(await readyz(r)).toMatchObject({ redis: { status: 'UP', topology: 'cluster', primaries: 3 } });
    sub = await subscribe(r);
    const made = [seedVolumes(sim, 1, 'default', 'c1')[0]!];
    await until(() => created(sub).length >= 1, 'a change over TLS', 30_000);

    const from = await cluster.ownerOf(LIVE_SLOT);
    const to = cluster.nodes.find((n) => n !== from)!;
    await cluster.moveSlot(LIVE_SLOT, to);
    made.push(seedVolumes(sim, 1, 'default', 'c2')[0]!);
    await expectEachCreatedOnce(made, sub);
    await until(async () => (await readyz(r)).redis?.slotPrimary === to.address, 'the new primary in /readyz', 15_000);
    for (const text of [JSON.stringify(await readyz(r)), r.output(), r.errors()]) expect(text).not.toContain(PASSWORD);
  }, 90_000);
});
