/**
 * Idempotency keys in a real redis-server shared by two gateways over HTTP against the OpenStack
 * simulator: a retry on the other replica answers the first result, a duplicate while the first
 * runs is refused on the other replica, Redis down fails a keyed create before any backend call (bad
 * input is still BAD_USER_INPUT); and the Redis store itself (one owner among concurrent claims,
 * complete, release, the default prefix).
 */
import { Redis } from 'ioredis';
import { RedisIdempotencyStore } from '../../server/idempotency';
import { IDEMPOTENCY_CLAIM_TTL_MS, IDEMPOTENCY_TTL_MS } from '../../domain/idempotency';
import {
  disposeAll,
  startGatewayFor,
  startOpenStack,
  type GatewayUnderTest,
  type OpenStackUnderTest,
} from '../support/harness';
import { startRedisServer, type RedisServerUnderTest } from '../support/redis';
import { count, CREATE, failure, finalState, sleep } from './idempotency-helpers';

describe('idempotency keys in Redis shared by two gateways', () => {
  let redis: RedisServerUnderTest;
  let os: OpenStackUnderTest;
  let a: GatewayUnderTest;
  let b: GatewayUnderTest;
  let auth: Record<string, string>;
  const posts = (): number =>
    count(
      os.sim.requests().filter((r) => r.service === 'cinder'),
      'POST',
      '/volumes',
    );

  beforeEach(async () => {
    redis = await startRedisServer();
    os = await startOpenStack({ delays: { createMs: 30 } });
    const options = {
      operationOptions: { pollMs: 20, maxPollMs: 50 },
      redis: { url: redis.url, keyPrefix: 'shared:' },
    };
    a = await startGatewayFor([os.backend('os')], options);
    b = await startGatewayFor([os.backend('os')], options);
    auth = { 'x-auth-token': os.demoToken };
  });
  afterEach(async () => {
    await disposeAll();
    await redis.stop();
  });

  it('should answer a retry on the other replica with the first result, and keep only ids under <prefix>{live}:idempotency:', async () => {
    const i = {
      backend: 'os',
      name: 'replicated',
      sizeGiB: 1,
      description: 'secret-ish text',
      idempotencyKey: 'rep-1',
    };
    const first = await a.gql(CREATE, { i }, auth);
    expect(first.body.errors).toBeUndefined();
    const onB = await b.gql(CREATE, { i }, auth);
    expect(onB.body.errors).toBeUndefined();
    expect(onB.body.data.createVolume.volume.id).toBe(first.body.data.createVolume.volume.id);
    expect(onB.body.data.createVolume.operation).toEqual(first.body.data.createVolume.operation);
    expect(posts()).toBe(1);
    expect(await finalState(b, onB.body.data.createVolume.operation.id, auth)).toBe('SUCCEEDED');
    // Another input under the key is refused on B too.
    expect(failure(await b.gql(CREATE, { i: { ...i, sizeGiB: 3 } }, auth)).code).toBe('IDEMPOTENCY_KEY_REUSED');

    const probe = new Redis(redis.url);
    try {
      const keys = await probe.keys('shared:{live}:idempotency:*');
      expect(keys).toEqual([expect.stringMatching(/^shared:{live}:idempotency:[A-Za-z0-9_-]{43}$/)]);
      const stored = (await probe.get(keys[0]!))!;
      expect(JSON.parse(stored)).toEqual({
        fingerprint: expect.any(String),
        state: 'done',
        result: {
          ref: { backend: 'os', namespace: os.demo, nativeId: expect.any(String) },
          operation: first.body.data.createVolume.operation.id,
        },
      });
      for (const needle of ['replicated', 'secret-ish text', 'rep-1', os.demoToken])
        expect({ needle, found: stored.includes(needle) || keys[0]!.includes(needle) }).toEqual({
          needle,
          found: false,
        });
      const ttl = await probe.pttl(keys[0]!);
      expect(ttl).toBeGreaterThan(IDEMPOTENCY_TTL_MS - 60_000);
      expect(ttl).toBeLessThanOrEqual(IDEMPOTENCY_TTL_MS);
    } finally {
      await probe.quit();
    }
  });

  it('should answer CONFLICT on one replica while the other runs the first request, its claim held for at most the claim TTL', async () => {
    os.sim.setLatency(500, 'cinder');
    const i = { backend: 'os', name: 'raced', sizeGiB: 1, idempotencyKey: 'rep-2' };
    const first = a.gql(CREATE, { i }, auth);
    const probe = new Redis(redis.url);
    try {
      for (let n = 0; n < 200 && posts() === 0; n++) await sleep(10);
      const [key] = await probe.keys('shared:{live}:idempotency:*');
      expect(JSON.parse((await probe.get(key!))!)).toEqual({ fingerprint: expect.any(String), state: 'pending' });
      expect(await probe.pttl(key!)).toBeLessThanOrEqual(IDEMPOTENCY_CLAIM_TTL_MS);
      expect(failure(await b.gql(CREATE, { i }, auth))).toMatchObject({ code: 'CONFLICT', retryable: true });
      expect((await first).body.errors).toBeUndefined();
    } finally {
      os.sim.setLatency(0, 'cinder');
      await probe.quit();
    }
    expect((await b.gql(CREATE, { i }, auth)).body.data.createVolume.operation.id).toBe(
      (await first).body.data.createVolume.operation.id,
    );
    expect(posts()).toBe(1);
  });

  it('should fail a keyed create with BACKEND_UNAVAILABLE (retryable) before any backend call while Redis is down, and still run unkeyed ones', async () => {
    await redis.kill();
    const down = await a.gql(
      CREATE,
      { i: { backend: 'os', name: 'no-redis', sizeGiB: 1, idempotencyKey: 'rep-3' } },
      auth,
    );
    expect(failure(down)).toMatchObject({ code: 'BACKEND_UNAVAILABLE', retryable: true });
    expect(posts()).toBe(0);
    const unkeyed = await a.gql(CREATE, { i: { backend: 'os', name: 'no-redis', sizeGiB: 1 } }, auth);
    expect(unkeyed.body.errors).toBeUndefined();
    expect(posts()).toBe(1);
  });
  it('should refuse a keyed create with a bad kind part as BAD_USER_INPUT before claiming the key, even while Redis is down', async () => {
    await redis.kill();
    const bad = await a.gql(
      CREATE,
      {
        i: {
          backend: 'os',
          name: 'bad-part',
          sizeGiB: 1,
          idempotencyKey: 'rep-4',
          cinder: { snapshotId: 'not-a-global-id' },
        },
      },
      auth,
    );
    expect(failure(bad)).toMatchObject({ code: 'BAD_USER_INPUT', argument: 'input.cinder.snapshotId' });
    expect(posts()).toBe(0);
  });
});

describe('RedisIdempotencyStore', () => {
  let redis: RedisServerUnderTest;
  const clients: Redis[] = [];
  beforeAll(async () => {
    redis = await startRedisServer();
    clients.push(new Redis(redis.url), new Redis(redis.url));
  });
  afterAll(async () => {
    for (const c of clients) await c.quit();
    await redis.stop();
  });

  it('should let exactly one of many concurrent claims from two replicas own a key', async () => {
    const stores = clients.map((client) => new RedisIdempotencyStore({ client, keyPrefix: 'race:' }));
    const answers = await Promise.all(Array.from({ length: 20 }, (_, n) => stores[n % 2]!.claim('k', 'fp', 60_000)));
    expect(answers.filter((x) => x === null)).toHaveLength(1);
    expect(answers.filter((x) => x !== null)).toEqual(
      Array(19).fill({ fingerprint: 'fp', state: 'pending', result: undefined }),
    );
  });

  it('should complete only a key still claimed, release it, and use the prefix vg: by default', async () => {
    const errors: string[] = [];
    const store = new RedisIdempotencyStore({ client: clients[0]!, onError: (op) => errors.push(op) });
    expect(store.key('abc')).toBe('vg:{live}:idempotency:abc');
    expect(await store.claim('abc', 'fp', 60_000)).toBeNull();
    await store.complete('abc', { fingerprint: 'fp', state: 'done', result: { id: 'v-1' } }, 120_000);
    expect(await store.claim('abc', 'other', 60_000)).toEqual({
      fingerprint: 'fp',
      state: 'done',
      result: { id: 'v-1' },
    });
    expect(await clients[1]!.pttl('vg:{live}:idempotency:abc')).toBeGreaterThan(60_000);
    await store.release('abc');
    expect(await clients[1]!.exists('vg:{live}:idempotency:abc')).toBe(0);
    // A claim that is gone (expired) is not re-created by its late owner; the store says so.
    await store.complete('abc', { fingerprint: 'fp', state: 'done', result: { id: 'v-1' } }, 120_000);
    expect(await clients[1]!.exists('vg:{live}:idempotency:abc')).toBe(0);
    expect(errors).toEqual(['complete']);
    expect(await store.claim('abc', 'fp', 60_000)).toBeNull();
  });
});
