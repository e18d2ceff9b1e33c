/**
 * Idempotency keys over a Redis restart that lost the data (issue 17, item 9; docs/reliability.md
 * R9), with a real redis-server (no persistence) killed with SIGKILL and restarted empty on the same
 * port, two gateways sharing it and the OpenStack simulator counting Cinder creates. Before, a retry
 * after the restart found no key and created a second volume. Now a marker key tells each replica
 * that Redis lost its data; it writes back the keys it holds and refuses creates with other keys
 * for the claim TTL (BACKEND_UNAVAILABLE, retryable, retryAfterSeconds). With `VG_TEST_REDIS=cluster`
 * (`npm run test:redis-ha`), on a Redis Cluster whose primary serving the gateway's slot is killed
 * and rejoins empty.
 */
import { IdempotencyRecoveringError, RedisIdempotencyStore, type IdempotencyRecovery } from '../../server/idempotency';
import { IDEMPOTENCY_CLAIM_TTL_MS, IDEMPOTENCY_TTL_MS } from '../../domain/idempotency';
import {
  disposeAll,
  startGatewayFor,
  startOpenStack,
  type GatewayUnderTest,
  type OpenStackUnderTest,
} from '../support/harness';
import { stopRedisServers } from '../support/redis';
import { keysOf, startSharedRedis, type SharedRedisUnderTest } from '../support/redis-topology';
import type { RedisClient } from '../../subscriptions/redis-client';
import { until } from '../support/until';

const CREATE = 'mutation($i: CreateVolumeInput!) { createVolume(input: $i) { volume { id } operation { id } } }';

describe('idempotency keys over a Redis restart that lost its data (two gateways)', () => {
  let redis: SharedRedisUnderTest;
  let os: OpenStackUnderTest;
  let a: GatewayUnderTest;
  let b: GatewayUnderTest;
  let auth: Record<string, string>;
  const creates = (): number =>
    os.sim.requests().filter((r) => r.service === 'cinder' && r.method === 'POST' && r.path.endsWith('/volumes'))
      .length;
  const input = (name: string, key?: string) => ({
    backend: 'os',
    name,
    sizeGiB: 1,
    ...(key ? { idempotencyKey: key } : {}),
  });

  beforeAll(async () => {
    redis = await startSharedRedis();
    os = await startOpenStack({ delays: { createMs: 30 } });
    const options = {
      operationOptions: { pollMs: 20, maxPollMs: 50 },
      redis: redis.gatewayConfig('restart:'),
    };
    a = await startGatewayFor([os.backend('os')], options);
    b = await startGatewayFor([os.backend('os')], options);
    auth = { 'x-auth-token': os.demoToken };
  });
  afterAll(async () => {
    await disposeAll();
    await stopRedisServers();
  });

  it('should never create twice: the replica writes back its keys, a retry gets the first result, and a new key is refused on every replica for the claim TTL', async () => {
    // A create that finished before the restart, and one Redis dies under.
    const done = await a.gql(CREATE, { i: input('before', 'k-before') }, auth);
    expect(done.body.errors).toBeUndefined();
    os.sim.setLatency(1000, 'cinder');
    let during: Promise<{ body: any }>;
    try {
      during = a.gql(CREATE, { i: input('during', 'k-during') }, auth);
      await until(() => creates() === 2, 'the second create to reach Cinder');
      await redis.kill();
      expect((await during).body.errors).toBeUndefined();
    } finally {
      os.sim.setLatency(0, 'cinder');
    }
    await redis.restart();
    const probe = redis.connect();
    try {
      // The retry (refused with BACKEND_UNAVAILABLE only while nothing can tell) gets the first result: one create in Cinder.
      let retry: { body: any } | undefined;
      await until(
        async () => {
          retry = await a.gql(CREATE, { i: input('during', 'k-during') }, auth);
          return !retry.body.errors;
        },
        'the retry to be answered',
        30_000,
        100,
      );
      expect(retry!.body).toEqual((await during).body);
      expect((await a.gql(CREATE, { i: input('before', 'k-before') }, auth)).body).toEqual(done.body);
      expect(creates()).toBe(2);
      // A found the loss on reconnecting and wrote back both keys, done, with what they had left.
      await until(
        async () => (await keysOf(probe, 'restart:{live}:idempotency:*')).length === 2,
        'A to write its keys back',
        30_000,
        100,
      );
      for (const key of await keysOf(probe, 'restart:{live}:idempotency:*')) {
        expect(JSON.parse((await probe.get(key))!)).toMatchObject({
          state: 'done',
          result: { operation: expect.any(String) },
        });
        expect(await probe.pttl(key)).toBeGreaterThan(IDEMPOTENCY_TTL_MS - 120_000);
      }
      expect(await probe.exists('restart:{live}:idempotency-marker')).toBe(1);
      // The same retry on B: the key is back, and A writes back the finished operation record Redis
      // lost once its operations reader has reconnected. Until then the answer is a typed NOT_FOUND
      // naming the created volume (it was INTERNAL_SERVER_ERROR: the resolver assumed the record);
      // then the first result. Nothing is created again.
      const early: unknown[] = [];
      await until(
        async () => {
          const elsewhere = await b.gql(CREATE, { i: input('before', 'k-before') }, auth);
          if (elsewhere.body.errors) early.push(elsewhere.body.errors[0].extensions);
          else expect(elsewhere.body).toEqual(done.body);
          return !elsewhere.body.errors;
        },
        () => `B to answer with the first result (before: ${JSON.stringify(early.slice(-1))})`,
        30_000,
        100,
      );
      for (const e of early)
        expect(e).toMatchObject({ code: 'NOT_FOUND', createdId: done.body.data.createVolume.volume.id });
      expect(creates()).toBe(2);
      // B finds the loss too (the marker changed), and answers a new key only after the window.
      await until(
        async () =>
          (await b.gql(CREATE, { i: input('after', 'k-new') }, auth)).body.errors?.[0]?.extensions
            ?.retryAfterSeconds !== undefined,
        'B to find the loss',
        30_000,
        100,
      );

      // Any other key, on either replica, is refused until the claim TTL has passed since the loss.
      for (const gw of [a, b]) {
        const refused = await gw.gql(CREATE, { i: input('after', 'k-new') }, auth);
        expect(refused.body.data).toBeNull();
        const ext = refused.body.errors[0].extensions;
        expect(ext).toEqual({ code: 'BACKEND_UNAVAILABLE', retryable: true, retryAfterSeconds: expect.any(Number) });
        expect(ext.retryAfterSeconds).toBeGreaterThan(IDEMPOTENCY_CLAIM_TTL_MS / 1000 - 120);
        expect(ext.retryAfterSeconds).toBeLessThanOrEqual(IDEMPOTENCY_CLAIM_TTL_MS / 1000);
        expect(refused.body.errors[0].message).toContain('lost its data');
      }
      expect(creates()).toBe(2);
      // Creates without a key go on.
      expect((await a.gql(CREATE, { i: input('unkeyed') }, auth)).body.errors).toBeUndefined();
      expect(creates()).toBe(3);
    } finally {
      await probe.quit();
    }
  });
});

describe('RedisIdempotencyStore over a Redis restart', () => {
  let redis: SharedRedisUnderTest;
  const clients: RedisClient[] = [];
  afterAll(async () => {
    for (const c of clients) c.disconnect();
    await stopRedisServers();
  });

  it('should write back what each replica holds, refuse other keys for the window, then claim again', async () => {
    redis = await startSharedRedis();
    const client = (): RedisClient => {
      const c = redis.connect({ maxRetriesPerRequest: 1, retryStrategy: () => 100 });
      c.on('error', () => {});
      clients.push(c);
      return c;
    };
    const recoveries: Array<{ who: string } & IdempotencyRecovery> = [];
    const store = (who: string): RedisIdempotencyStore =>
      new RedisIdempotencyStore({
        client: client(),
        keyPrefix: 'w:',
        recoveryWindowMs: 3000,
        onRecovery: (r) => recoveries.push({ who, ...r }),
      });
    const [a, b] = [store('a'), store('b')];
    expect(await a.claim('ka', 'fp-a', 60_000)).toBeNull();
    await a.complete('ka', { fingerprint: 'fp-a', state: 'done', result: { id: 'v-a' } }, 120_000);
    expect(await b.claim('kb', 'fp-b', 60_000)).toBeNull();

    await redis.restart();
    await until(() => recoveries.length === 2, 'both replicas to find the loss');
    expect(recoveries.map((r) => [r.who, r.restored]).sort()).toEqual([
      ['a', 1],
      ['b', 1],
    ]);
    // Each one's key is back for both: A's result, B's running claim.
    expect(await b.claim('ka', 'fp-a', 60_000)).toEqual({ fingerprint: 'fp-a', state: 'done', result: { id: 'v-a' } });
    expect(await a.claim('kb', 'fp-b', 60_000)).toEqual({ fingerprint: 'fp-b', state: 'pending', result: undefined });
    const refused = await a.claim('new', 'fp', 60_000).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(IdempotencyRecoveringError);
    expect((refused as IdempotencyRecoveringError).toExtensions()).toEqual({
      code: 'BACKEND_UNAVAILABLE',
      retryable: true,
      retryAfterSeconds: expect.any(Number),
    });
    expect((refused as IdempotencyRecoveringError).retryAfterSeconds).toBeLessThanOrEqual(3);
    // After the window, keys are claimed as before.
    await until(
      async () => (await a.claim('new', 'fp', 60_000).catch(() => 'refused')) === null,
      'the window to end',
      15_000,
      200,
    );
    expect(await b.claim('new', 'fp', 60_000)).toEqual({ fingerprint: 'fp', state: 'pending', result: undefined });
  });
});
