/**
 * Scale-out with a real redis-server (docs/scaling.md): operation records shared between two
 * gateways, `/readyz` reporting Redis, a Redis crash that neither crashes nor stalls the gateway,
 * record expiry, configuration, and shutdown closing the connection. No mocks.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { RedisOperationStore } from '../../subscriptions/operations';
import type { OperationRecord } from '../../adapters/contract/model';
import {
  closedPortUrl,
  disposeAll,
  startGatewayFor,
  startOpenStack,
  type GatewayUnderTest,
  type OpenStackUnderTest,
  waitOperation,
} from '../support/harness';
import { operationRecord } from '../support/operation-record';
import { startRedisServer, stopRedisServers, type RedisServerUnderTest } from '../support/redis';

const root = join(__dirname, '..', '..');
const OP = 'operation { id kind state targetId backendStatus failureReason }';
const CREATE = `mutation($i: CreateVolumeInput!) { createVolume(input: $i) { ${OP} volume { id status } } }`;
const READ_OP = `query($id: ID!) { volumeOperation(id: $id) { id kind state backendStatus targetId } }`;

/** Fails the test at the end if anything rejected unhandled while it ran. */
const unhandled: unknown[] = [];
const onUnhandled = (reason: unknown): void => void unhandled.push(reason);
beforeAll(() => process.on('unhandledRejection', onUnhandled));
afterAll(async () => {
  process.off('unhandledRejection', onUnhandled);
  await stopRedisServers();
});

async function readyz(gw: GatewayUnderTest): Promise<{ status: number; body: any }> {
  const res = await fetch(gw.gateway.url.replace(/\/graphql$/, '/readyz'));
  return { status: res.status, body: await res.json() };
}

/** Repeats `probe` until `done` holds (bounded by a count, not by a time assertion). */
async function until<T>(probe: () => Promise<T>, done: (v: T) => boolean, tries = 200): Promise<T> {
  let v = await probe();
  for (let i = 0; i < tries && !done(v); i++) {
    await new Promise((r) => setTimeout(r, 25));
    v = await probe();
  }
  return v;
}

const record = (over: Partial<OperationRecord> = {}): OperationRecord =>
  operationRecord({ kind: 'CREATE_VOLUME', backend: 'os', ...over });

describe('two gateways sharing one Redis', () => {
  let redis: RedisServerUnderTest;
  let os: OpenStackUnderTest;
  let a: GatewayUnderTest;
  let b: GatewayUnderTest;
  let auth: Record<string, string>;

  beforeEach(async () => {
    unhandled.length = 0;
    redis = await startRedisServer();
    os = await startOpenStack({ delays: { createMs: 60 } });
    const options = {
      operationOptions: { pollMs: 20, maxPollMs: 50 },
      redis: { url: redis.url, keyPrefix: 'test-vg:' },
      readiness: { probeIntervalMs: 100 },
    };
    a = await startGatewayFor([os.backend('os')], options);
    b = await startGatewayFor([os.backend('os')], options);
    auth = { 'x-auth-token': os.demoToken };
  });
  afterEach(async () => {
    await disposeAll();
    await redis.stop();
    expect(unhandled).toEqual([]);
  });

  it('should answer, on gateway B, an operation started on gateway A, up to its final state', async () => {
    const res = await a.gql(CREATE, { i: { backend: 'os', name: 'shared', sizeGiB: 1 } }, auth);
    expect(res.body.errors).toBeUndefined();
    const started = res.body.data.createVolume.operation;
    expect(started).toMatchObject({ kind: 'CREATE_VOLUME', state: 'PENDING' });
    // B never saw the mutation: it reads A's record from Redis.
    const seen = await b.gql(READ_OP, { id: started.id }, auth);
    expect(seen.body.errors).toBeUndefined();
    expect(seen.body.data.volumeOperation).toMatchObject({
      id: started.id,
      kind: 'CREATE_VOLUME',
      targetId: started.targetId,
    });
    const done = await waitOperation(b, started.id, auth);
    expect(done).toMatchObject({ id: started.id, state: 'SUCCEEDED', backendStatus: 'available' });
    // Another project's caller cannot read it through B either.
    expect(
      (await b.gql(READ_OP, { id: started.id }, { 'x-auth-token': os.otherToken })).body.data.volumeOperation,
    ).toBeNull();
    // One key per record, under the configured prefix, with a TTL.
    const probe = new Redis(redis.url);
    try {
      const keys = await probe.keys('test-vg:{live}:operation:*');
      expect(keys).toHaveLength(1);
      expect(JSON.parse((await probe.hget(keys[0]!, 'j'))!)).toMatchObject({
        state: 'SUCCEEDED',
        kind: 'CREATE_VOLUME',
      });
      expect(await probe.pttl(keys[0]!)).toBeGreaterThan(0);
    } finally {
      probe.disconnect();
    }
  });

  it('should report Redis UP in /readyz, then DOWN once redis-server is killed while staying ready (200), and keep serving', async () => {
    const up = await until(
      () => readyz(a),
      (r) => r.body.redis.status === 'UP',
    );
    expect(up.status).toBe(200);
    expect(up.body.redis).toMatchObject({ status: 'UP', role: 'master', message: expect.stringContaining('PING') });
    expect(typeof up.body.redis.latencyMs).toBe('number');

    const before = (await a.gql(CREATE, { i: { backend: 'os', name: 'before-crash', sizeGiB: 1 } }, auth)).body.data
      .createVolume.operation;
    expect((await waitOperation(b, before.id, auth)).state).toBe('SUCCEEDED');

    await redis.kill();
    // Redis down alone leaves the gateway ready: keyed creates are refused meanwhile, the rest serves.
    const down = await until(
      () => readyz(a),
      (r) => r.body.redis.status === 'DOWN',
    );
    expect(down.status).toBe(200);
    expect(down.body.ready).toBe(true);
    expect(down.body.redis).toMatchObject({ status: 'DOWN', latencyMs: null });
    expect(down.body.backends).toEqual([expect.objectContaining({ id: 'os', status: 'UP' })]);

    // Queries still work, and so do mutations: A keeps its records in its own copy meanwhile.
    const list = await a.gql('{ volumes(first: 10) { nodes { name } } }', {}, auth);
    expect(list.body.errors).toBeUndefined();
    expect(list.body.data.volumes.nodes.map((v: any) => v.name)).toContain('before-crash');
    const during = await a.gql(CREATE, { i: { backend: 'os', name: 'during-outage', sizeGiB: 1 } }, auth);
    expect(during.body.errors).toBeUndefined();
    expect((await waitOperation(a, during.body.data.createVolume.operation.id, auth)).state).toBe('SUCCEEDED');
    // B never saw that one and cannot reach Redis: a retryable error, not a crash or a false "not found".
    const elsewhere = await b.gql(READ_OP, { id: during.body.data.createVolume.operation.id }, auth);
    expect(elsewhere.body.errors?.[0]?.extensions).toMatchObject({ code: 'BACKEND_UNAVAILABLE', retryable: true });
    expect((await readyz(b)).status).toBe(200);
  });

  it('should close its Redis connections on stop, after the in-flight request finished', async () => {
    const PER_GATEWAY = 3;
    const probe = new Redis(redis.url);
    try {
      const gatewayClients = async (): Promise<number> =>
        ((await probe.client('LIST')) as string).split('\n').filter((l) => / name=volume-gateway-/.test(l)).length;
      // Each gateway: its client and the stream readers of the event log and of operations (a blocking read needs its own connection).
      expect(await until(gatewayClients, (n) => n === 2 * PER_GATEWAY)).toBe(2 * PER_GATEWAY);
      os.sim.setLatency(400, 'cinder');
      const inFlight = a.gql('{ volumes(first: 1) { nodes { id } } }', {}, auth);
      // The list's own Cinder call (the background readiness probe calls Keystone and Cinder too).
      await until(
        async () => os.sim.requests().filter((r) => r.service === 'cinder' && r.path.includes('/volumes')).length,
        (n) => n > 0,
      );
      await a.gateway.stop();
      const res = await inFlight;
      expect(res.body.errors).toBeUndefined();
      expect(await until(gatewayClients, (n) => n === PER_GATEWAY)).toBe(PER_GATEWAY);
    } finally {
      probe.disconnect();
    }
  });
});

describe('RedisOperationStore', () => {
  let redis: RedisServerUnderTest;
  let client: Redis;
  beforeAll(async () => {
    redis = await startRedisServer();
    client = new Redis(redis.url);
  });
  afterAll(async () => {
    await client.quit();
    await redis.stop();
  });

  it('should give finished records the retention as TTL and running ones their deadline plus retention', async () => {
    const store = new RedisOperationStore({ client, keyPrefix: 'ttl:', retentionMs: 60_000 });
    const r = record({ deadline: Date.now() + 120_000 });
    await store.put(r);
    const running = await client.pttl(store.key(r.id));
    expect(running).toBeGreaterThan(120_000);
    expect(running).toBeLessThanOrEqual(180_000);
    await store.put({ ...r, state: 'SUCCEEDED', updatedAt: Date.now() });
    const finished = await client.pttl(store.key(r.id));
    expect(finished).toBeGreaterThan(0);
    expect(finished).toBeLessThanOrEqual(60_000);
  });

  it('should use one hour and the prefix vg: by default', async () => {
    const store = new RedisOperationStore({ client });
    const r = record({ state: 'FAILED', failureReason: 'x' });
    await store.put(r);
    const ttl = await client.pttl('vg:{live}:operation:' + r.id);
    expect(ttl).toBeGreaterThan(3_000_000);
    expect(ttl).toBeLessThanOrEqual(3_600_000);
    expect(await new RedisOperationStore({ client }).get(r.id)).toEqual(r);
  });

  it('should let a record finished longer ago than retention expire, for every replica', async () => {
    const writer = new RedisOperationStore({ client, keyPrefix: 'exp:', retentionMs: 60_000 });
    const r = record({ state: 'SUCCEEDED', updatedAt: Date.now() - 60_001 });
    await writer.put(r);
    expect(
      await until(
        () => client.exists(writer.key(r.id)),
        (n) => n === 0,
      ),
    ).toBe(0);
    expect(await new RedisOperationStore({ client, keyPrefix: 'exp:' }).get(r.id)).toBeNull();
    // The writer's own fallback copy is past retention too.
    expect(await writer.get(r.id)).toBeNull();
  });
});

describe('gateway without Redis', () => {
  afterEach(disposeAll);

  it('should say in /readyz that Redis is not configured, without failing readiness', async () => {
    const os = await startOpenStack();
    const gw = await startGatewayFor([os.backend('os')]);
    const r = await readyz(gw);
    expect(r.status).toBe(200);
    expect(r.body.redis).toMatchObject({
      status: 'NOT_CONFIGURED',
      latencyMs: null,
      message: expect.stringContaining('REDIS_URL'),
    });
  });
});

describe('volume-gateway with REDIS_URL', () => {
  const PASSWORD = 'hunter2-redis-secret';

  afterAll(stopRedisServers);

  const run = (env: Record<string, string>) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'server/main.ts'], {
      cwd: root,
      env: { ...process.env, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const out = { text: '' };
    child.stdout.on('data', (d: Buffer) => (out.text += d.toString()));
    child.stderr.on('data', (d: Buffer) => (out.text += d.toString()));
    return { child, out, exited: once(child, 'exit') };
  };

  it('should exit 2 naming REDIS_URL for a bad URL, without echoing it', async () => {
    const { out, exited } = run({
      GATEWAY_BACKENDS: 'n=nomad@http://127.0.0.1:1',
      REDIS_URL: `http://:${PASSWORD}@cache:6379`,
    });
    const [code] = await exited;
    expect(code).toBe(2);
    expect(out.text).toContain('REDIS_URL');
    expect(out.text).not.toContain(PASSWORD);
  });

  it('should connect with a password it never logs, and close the connection on SIGTERM before exiting 0', async () => {
    const redis = await startRedisServer({ password: PASSWORD });
    const { child, out, exited } = run({ GATEWAY_BACKENDS: `n=nomad@${await closedPortUrl()}`, REDIS_URL: redis.url });
    try {
      for (let i = 0; i < 300 && !/"msg":"redis connected"/.test(out.text); i++)
        await new Promise((r) => setTimeout(r, 100));
      expect(out.text).toContain('"msg":"redis connected"');
      child.kill('SIGTERM');
      const [code] = await exited;
      expect(code).toBe(0);
      const shutting = out.text.indexOf('"msg":"shutting down"');
      expect(shutting).toBeGreaterThan(-1);
      expect(out.text.indexOf('"msg":"redis connection closed"')).toBeGreaterThan(shutting);
      expect(out.text).not.toContain(PASSWORD);
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
    }
  });

  it('should keep running and log no password when Redis refuses the password', async () => {
    const redis = await startRedisServer({ password: PASSWORD });
    const wrong = redis.url.replace(encodeURIComponent(PASSWORD), 'wrong-' + PASSWORD.split('').reverse().join(''));
    const { child, out, exited } = run({ GATEWAY_BACKENDS: `n=nomad@${await closedPortUrl()}`, REDIS_URL: wrong });
    try {
      for (let i = 0; i < 300 && !/"msg":"redis error"/.test(out.text); i++)
        await new Promise((r) => setTimeout(r, 100));
      expect(out.text).toMatch(/"msg":"redis error"/);
      expect(child.exitCode).toBeNull();
      expect(out.text).not.toContain(PASSWORD);
      expect(out.text).not.toContain(PASSWORD.split('').reverse().join(''));
      child.kill('SIGTERM');
      expect((await exited)[0]).toBe(0);
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
    }
  });
});
