/**
 * Redis Sentinel with passwords and TLS (issue 30: "the same TLS and auth options for each"): a
 * primary and a replica with `requirepass`, three sentinels with a `requirepass` of their own, every
 * process TLS-only (plain ports closed, replication and the sentinels' links over TLS, certificates
 * from a test CA made by openssl). A gateway given REDIS_PASSWORD, REDIS_SENTINEL_PASSWORD,
 * REDIS_TLS, REDIS_SENTINEL_TLS and REDIS_TLS_CA_FILE finds the primary through the sentinels,
 * delivers changes, and follows a failover; one given a wrong sentinel password says so in /readyz
 * without the password in it or in its logs.
 */
import type { NomadSimulator } from '../../simulators/nomad';
import { disposeAll, seedVolumes, startNomad } from '../support/harness';
import { startSentinelSet, type SentinelSetUnderTest } from '../support/redis-sentinel';
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
} from './support';

const DATA_PASSWORD = 'data-nodes-secret';
const SENTINEL_PASSWORD = 'sentinels-secret';

describe('a gateway on Redis Sentinel with passwords and TLS', () => {
  let set: SentinelSetUnderTest;
  let sim: NomadSimulator;
  let r: Replica;
  let sub: Subscriber;
  const started: Replica[] = [];

  beforeAll(async () => {
    makeCertificates();
    [set, sim] = await Promise.all([
      startSentinelSet({
        password: DATA_PASSWORD,
        sentinelPassword: SENTINEL_PASSWORD,
        tls: { cert: at('server-1.crt'), key: at('server-1.key'), ca: at('ca.crt') },
      }),
      startNomad(),
    ]);
    sim.addToken({ secret: SERVICE_TOKEN, management: true });
    r = await startReplica('a', set.env, nomadBackend(sim.url));
    started.push(r);
  }, 90_000);
  afterAll(async () => {
    await sub?.dispose();
    for (const x of started) x.child.kill('SIGKILL');
    await disposeAll();
    await set?.stop();
    removeCertificates();
  });

  it('should find the primary through the sentinels, deliver changes, and follow a failover', async () => {
    expect(set.env).toMatchObject({ REDIS_TLS: 'true', REDIS_SENTINEL_TLS: 'true' });
    await holdingWithView(r);
    const before = await set.primaryPort();
    expect(await readyz(r)).toMatchObject({ redis: { status: 'UP', topology: 'sentinel' } });
    sub = await subscribe(r);
    const made = [seedVolumes(sim, 1, 'default', 't1')[0]!];
    await until(() => created(sub).length >= 1, 'a change over TLS', 30_000);

    await set.nodes.find((x) => x.port === before)!.kill();
    await set.failedOver(before);
    made.push(seedVolumes(sim, 1, 'default', 't2')[0]!);
    await expectEachCreatedOnce(made, sub);
    expect(JSON.stringify(await readyz(r))).not.toContain(DATA_PASSWORD);
  }, 90_000);

  it('should say in /readyz that the sentinels refused it, without the password there or in its logs', async () => {
    const wrong = 'not-the-sentinels-password';
    const bad = await startReplica('bad', { ...set.env, REDIS_SENTINEL_PASSWORD: wrong }, nomadBackend(sim.url));
    started.push(bad);
    let ready: any;
    await until(
      async () => {
        ready = await readyz(bad);
        return ready.redis?.status === 'DOWN' && !/not probed/.test(String(ready.redis?.message));
      },
      () => `/readyz to say Redis is down (${JSON.stringify(ready?.redis)})`,
      30_000,
    );
    expect(ready.redis.message).toMatch(/WRONGPASS|invalid username-password/i);
    for (const text of [JSON.stringify(ready), bad.output(), bad.errors()]) {
      expect(text).not.toContain(wrong);
      expect(text).not.toContain(SENTINEL_PASSWORD);
      expect(text).not.toContain(DATA_PASSWORD);
    }
  }, 60_000);
});
