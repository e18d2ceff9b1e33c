/**
 * Watcher leases on a real redis-server (subscriptions/leases): several managers, each with its own
 * replica id and connection, contend for the same backends. A sampler checks every few ms that no
 * backend is ever held by two at once; takeovers are awaited by sequence (`until`), with bounds
 * several times the design's (TTL + one renew interval) because the machine is shared.
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { Redis, type RedisOptions } from 'ioredis';
import {
  LeaseOptionError,
  LeasesStoppedError,
  WatcherLeases,
  fenceKey,
  leaseKey,
  RESET_HOLD,
  parseFenceToken,
  type LeaseChange,
  type WatcherLeasesOptions,
} from '../../subscriptions/leases';
import { startRedisServer, stopRedisServers, type RedisServerUnderTest } from '../support/redis';
import { until } from '../support/until';
import { FENCED_APPEND } from '../support/lease-holder';

const root = join(__dirname, '..', '..');
const BACKENDS = ['nomad-east', 'os-west'];

const unhandled: unknown[] = [];
const onUnhandled = (reason: unknown): void => void unhandled.push(reason);

let redis: RedisServerUnderTest;
let admin: Redis;
let prefix: string;
let replicas: Replica[] = [];
let tests = 0;

interface Replica {
  id: string;
  leases: WatcherLeases;
  client: Redis;
  changes: { backend: string; held: boolean; info: LeaseChange; at: number }[];
}

function connect(options: RedisOptions = {}): Redis {
  const c = new Redis(redis.url, {
    maxRetriesPerRequest: 1,
    commandTimeout: 1000,
    retryStrategy: (times) => Math.min(times * 50, 200),
    ...options,
  });
  c.on('error', () => {});
  return c;
}

/** A manager with its own connection; `clientOptions` replace the test defaults (e.g. no command timeout). */
function replica(id: string, options: Partial<WatcherLeasesOptions> = {}, clientOptions: RedisOptions = {}): Replica {
  const client = connect(clientOptions);
  const changes: Replica['changes'] = [];
  const leases = new WatcherLeases({
    client,
    keyPrefix: prefix,
    replicaId: id,
    ttlMs: 1000,
    ...options,
    onChange: (backend, held, info) => changes.push({ backend, held, info, at: performance.now() }),
  });
  const r = { id, leases, client, changes };
  replicas.push(r);
  return r;
}

const holdersOf = (rs: Replica[], backend: string): Replica[] => rs.filter((r) => r.leases.holds(backend));
const holderOf = (rs: Replica[], backend: string): Replica | undefined => {
  const h = holdersOf(rs, backend);
  return h.length === 1 ? h[0] : undefined;
};
const eachHeldOnce = (rs: Replica[]): boolean => BACKENDS.every((b) => holderOf(rs, b) !== undefined);
const n = (token: string): bigint => parseFenceToken(token)!.n;

/** Samples every 5 ms that no backend has two holders; `stop()` answers what it saw wrong. */
function sampleExclusive(rs: Replica[]): { stop(): string[] } {
  const wrong: string[] = [];
  const timer = setInterval(() => {
    for (const b of BACKENDS) {
      const h = holdersOf(rs, b);
      if (h.length > 1) wrong.push(`${b} held by ${h.map((r) => r.id).join(' and ')}`);
    }
  }, 5);
  return { stop: () => (clearInterval(timer), wrong) };
}

beforeAll(async () => {
  process.on('unhandledRejection', onUnhandled);
  redis = await startRedisServer();
  admin = connect();
});

beforeEach(async () => {
  prefix = `t${++tests}:`;
  // A deployment that has run before: a new counter holds every lease off for a TTL (last test).
  for (const b of BACKENDS) await admin.set(fenceKey(prefix, b), '1');
});

afterEach(async () => {
  await Promise.all(replicas.map((r) => r.leases.release()));
  for (const r of replicas) r.client.disconnect();
  replicas = [];
});

afterAll(async () => {
  admin.disconnect();
  await stopRedisServers();
  process.off('unhandledRejection', onUnhandled);
  expect(unhandled).toEqual([]);
});

describe('watcher leases on one Redis', () => {
  it('should give each backend to exactly one of three replicas, with the token Redis holds', async () => {
    const rs = [replica('a'), replica('b'), replica('c')];
    const sampler = sampleExclusive(rs);
    for (const r of rs) r.leases.contend(BACKENDS);
    await until(() => eachHeldOnce(rs), 'each backend held once');
    // Held on through several renewals, never by two.
    const since = performance.now();
    await until(() => performance.now() - since > 1500, 'several renew intervals', 5000, 50);
    expect(eachHeldOnce(rs)).toBe(true);
    const fromRedis = await rs[0]!.leases.holders();
    for (const h of fromRedis) {
      const holder = holderOf(rs, h.backend)!;
      expect(h).toEqual(
        expect.objectContaining({ replicaId: holder.id, token: holder.leases.fence(h.backend)!.token }),
      );
      expect(h.msLeft).toBeGreaterThan(0);
      expect(await admin.get(leaseKey(prefix, h.backend))).toBe(h.token);
    }
    // The local view agrees: each backend in exactly one replica's stats, with time left.
    const held = rs.flatMap((r) => r.leases.stats().held);
    expect(held.map((h) => h.backend).sort()).toEqual([...BACKENDS].sort());
    expect(held.every((h) => h.msLeft > 0 && h.msLeft <= 800)).toBe(true);
    expect(sampler.stop()).toEqual([]);
  });

  it('should hand a released lease to another replica within about one renew interval, not a TTL', async () => {
    const options = { ttlMs: 4000, renewEveryMs: 300 };
    const rs = [replica('a', options), replica('b', options), replica('c', options)];
    const sampler = sampleExclusive(rs);
    for (const r of rs) r.leases.contend(BACKENDS);
    await until(() => eachHeldOnce(rs), 'each backend held once');
    const first = holderOf(rs, BACKENDS[0]!)!;
    const held = BACKENDS.filter((b) => first.leases.holds(b));
    const started = performance.now();
    await first.leases.release();
    expect(held.every((b) => !first.leases.holds(b))).toBe(true);
    expect(first.changes.filter((c) => !c.held).map((c) => c.info.reason)).toEqual(held.map(() => 'released'));
    const others = rs.filter((r) => r !== first);
    await until(() => held.every((b) => holderOf(others, b) !== undefined), 'a takeover', 3000);
    // A TTL's wait would be 4000 ms; one interval is 300 (bound loose for a loaded machine).
    expect(performance.now() - started).toBeLessThan(3000);
    expect(sampler.stop()).toEqual([]);
  });

  it('should replace a holder that stops renewing within TTL + one interval, after its local deadline, with a greater token', async () => {
    const rs = [replica('a'), replica('b')];
    const sampler = sampleExclusive(rs);
    rs[0]!.leases.contend(BACKENDS);
    await until(() => BACKENDS.every((b) => rs[0]!.leases.holds(b)), 'a to hold both');
    rs[1]!.leases.contend(BACKENDS);
    const old = rs[0]!.leases.fence(BACKENDS[0]!)!.token;
    const stopped = performance.now();
    rs[0]!.leases.stop();
    await until(() => BACKENDS.every((b) => rs[1]!.leases.holds(b)), 'b to take over', 5000);
    const gained = rs[1]!.changes.find((c) => c.held && c.backend === BACKENDS[0])!;
    const lost = rs[0]!.changes.find((c) => !c.held && c.backend === BACKENDS[0])!;
    expect(lost.info).toEqual({ token: old, reason: 'expired' });
    expect(lost.at).toBeLessThan(gained.at);
    expect(rs[0]!.leases.fence(BACKENDS[0]!)).toBeNull();
    expect(gained.at - stopped).toBeLessThan(3 * (1000 + 333));
    expect(n(gained.info.token)).toBeGreaterThan(n(old));
    expect(sampler.stop()).toEqual([]);
  });

  it('should replace a holder whose connection dropped, and fence its writes off', async () => {
    const rs = [replica('a'), replica('b')];
    const sampler = sampleExclusive(rs);
    rs[0]!.leases.contend(BACKENDS);
    await until(() => rs[0]!.leases.holds(BACKENDS[0]!), 'a to hold');
    rs[1]!.leases.contend(BACKENDS);
    const old = rs[0]!.leases.fence(BACKENDS[0]!)!;
    const appends = `${prefix}{live}:appends`;
    expect(await admin.eval(FENCED_APPEND, 2, old.key, appends, old.token)).toBe(1);
    rs[0]!.client.disconnect();
    await until(() => rs[1]!.leases.holds(BACKENDS[0]!), 'b to take over', 5000);
    expect(rs[0]!.changes.filter((c) => !c.held).map((c) => c.info.reason)).toEqual(['expired', 'expired']);
    const now = rs[1]!.leases.fence(BACKENDS[0]!)!;
    expect(n(now.token)).toBeGreaterThan(n(old.token));
    // The old holder's token no longer writes; the new one's does.
    expect(await admin.eval(FENCED_APPEND, 2, old.key, appends, old.token)).toBe(0);
    expect(await admin.eval(FENCED_APPEND, 2, now.key, appends, now.token)).toBe(2);
    expect(sampler.stop()).toEqual([]);
  });

  it('should report the lease lost when a renew finds another token in the key', async () => {
    const a = replica('a');
    a.leases.contend([BACKENDS[0]!]);
    await until(() => a.leases.holds(BACKENDS[0]!), 'a to hold');
    const { key, token } = a.leases.fence(BACKENDS[0]!)!;
    // Another replica's token, as after a takeover this one did not see coming.
    await admin.set(key, '99999999999999:intruder', 'PX', 1500);
    await until(() => a.changes.some((c) => !c.held), 'a to see the loss', 5000);
    expect(a.changes.at(-1)!.info).toEqual({ token, reason: 'taken' });
    expect(a.leases.fence(BACKENDS[0]!)).toBeNull();
    expect(await admin.get(key)).toBe('99999999999999:intruder');
    // Once the intruder's lease expires, a takes it back under a new token.
    await until(() => a.leases.holds(BACKENDS[0]!), 'a to take it back', 5000);
    expect(a.leases.fence(BACKENDS[0]!)!.token).not.toBe(token);
    expect(a.leases.stats()).toEqual(expect.objectContaining({ acquisitions: 2, losses: 1 }));
  });

  it('should count a lease lost at its local deadline while Redis does not answer at all', async () => {
    // No command timeout: nothing but the local deadline can end the lease.
    const a = replica('a', {}, { commandTimeout: undefined, maxRetriesPerRequest: null });
    a.leases.contend(BACKENDS);
    await until(() => BACKENDS.every((b) => a.leases.holds(b)), 'a to hold both');
    const paused = performance.now();
    redis.process.kill('SIGSTOP');
    try {
      await until(() => a.changes.filter((c) => !c.held).length === 2, 'a to drop both leases', 5000);
      expect(a.changes.filter((c) => !c.held).map((c) => c.info.reason)).toEqual(['expired', 'expired']);
      // Due ttl - margin (800 ms) after the last renew was sent, before the pause; Redis keeps the key 1000.
      expect(a.changes.at(-1)!.at - paused).toBeLessThan(1000);
    } finally {
      redis.process.kill('SIGCONT');
    }
    await until(() => BACKENDS.every((b) => a.leases.holds(b)), 'a to take them again', 5000);
  });

  it('should make a holder paused past its TTL (SIGSTOP) learn of the loss before it writes again', async () => {
    const backend = BACKENDS[0]!;
    const appends = `${prefix}{live}:appends`;
    const child = spawn(process.execPath, ['--import', 'tsx', 'test/support/lease-holder.ts'], {
      cwd: root,
      env: {
        ...process.env,
        REDIS_URL: redis.url,
        LEASE_BACKEND: backend,
        LEASE_REPLICA: 'paused',
        LEASE_TTL_MS: '800',
        LEASE_KEY_PREFIX: prefix,
        APPENDS_KEY: appends,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    try {
      await until(
        () => /append \S+ ok/.test(out),
        () => `the child to hold and append:\n${out}`,
        20_000,
      );
      const token = /gained (\S+)/.exec(out)![1]!;
      const b = replica('b', { ttlMs: 800 });
      b.leases.contend([backend]);
      const stopped = performance.now();
      child.kill('SIGSTOP');
      await until(() => b.leases.holds(backend), 'b to take over from the paused child', 5000);
      const takeover = performance.now() - stopped;
      const mark = out.length;
      child.kill('SIGCONT');
      await until(
        () => /lost /.test(out.slice(mark)),
        () => `the child to report the loss:\n${out.slice(mark)}`,
      );
      const after = out.slice(mark).trim().split('\n');
      const lost = after.findIndex((l) => l.startsWith('lost '));
      expect(after[lost]).toBe(`lost ${token} expired`);
      // Nothing was sent after the resume before the loss was known (an answer to an earlier send may come first).
      expect(after.slice(0, lost).filter((l) => l.startsWith('try '))).toEqual([]);
      expect(after.filter((l, i) => i > lost && l === `try ${token}`)).toEqual([]);
      expect(await admin.get(leaseKey(prefix, backend))).toBe(b.leases.fence(backend)!.token);
      // Every append the child made under its token landed before the takeover, and was answered ok.
      const written = (await admin.lrange(appends, 0, -1)).filter((t) => t === token).length;
      expect(written).toBe(out.split('\n').filter((l) => l === `append ${token} ok`).length);
      expect(takeover).toBeLessThan(3 * (800 + 266));
    } finally {
      child.kill('SIGKILL');
    }
  });

  it('should hold every lease off for a TTL after Redis restarts without its data, then give each to one replica', async () => {
    // b retries more often than a renews, so after the restart b asks first while a still holds.
    const rs = [replica('a'), replica('b', { renewEveryMs: 100 })];
    rs[0]!.leases.contend(BACKENDS);
    await until(() => BACKENDS.every((b) => rs[0]!.leases.holds(b)), 'a to hold both');
    rs[1]!.leases.contend(BACKENDS);
    const before = BACKENDS.map((b) => n(holderOf(rs, b)!.leases.fence(b)!.token));
    const sampler = sampleExclusive(rs);
    const restarted = performance.now();
    await redis.restart();
    await until(async () => (await admin.get(leaseKey(prefix, BACKENDS[0]!))) === RESET_HOLD, 'the reset hold', 5000);
    const renewed = (): boolean =>
      eachHeldOnce(rs) && BACKENDS.every((b, i) => n(holderOf(rs, b)!.leases.fence(b)!.token) > before[i]!);
    await until(renewed, 'each backend held once again, under a new token', 10_000);
    const recovered = performance.now() - restarted;
    const holders = await rs[0]!.leases.holders();
    expect(holders.map((h) => h.replicaId)).toEqual(BACKENDS.map((b) => holderOf(rs, b)!.id));
    expect(recovered).toBeLessThan(3 * (1000 + 333) + 2000);
    // Each old holder stopped before a new one started: per backend, gains and losses alternate in time.
    for (const b of BACKENDS) {
      const changes = rs.flatMap((r) => r.changes.filter((c) => c.backend === b)).sort((x, y) => x.at - y.at);
      expect(changes.map((c) => c.held)).toEqual(changes.map((_, i) => i % 2 === 0));
      expect(changes.length).toBeGreaterThanOrEqual(3);
    }
    expect(sampler.stop()).toEqual([]);
  });
});

describe('watcher lease options', () => {
  it('should reject bad options and names with typed errors, and contending after a release', async () => {
    const client = connect();
    try {
      expect(() => new WatcherLeases({ client, ttlMs: 5 })).toThrow(LeaseOptionError);
      expect(() => new WatcherLeases({ client, ttlMs: 1000, renewEveryMs: 900 })).toThrow(/renewEveryMs/);
      expect(() => new WatcherLeases({ client, replicaId: 'has space' })).toThrow(/replicaId/);
      expect(() => new WatcherLeases({ client, keyPrefix: 'a{b}:' })).toThrow(/keyPrefix/);
      const leases = new WatcherLeases({ client, keyPrefix: prefix });
      expect(leases.settings).toEqual({ ttlMs: 10_000, renewEveryMs: 3333, safetyMarginMs: 2000, keyPrefix: prefix });
      expect(leases.replicaId).toMatch(/-\d+-[0-9a-f]{8}$/);
      expect(() => leases.contend([''])).toThrow(expect.objectContaining({ code: 'LEASE_OPTION_INVALID' }));
      await leases.release();
      expect(() => leases.contend(['x'])).toThrow(LeasesStoppedError);
    } finally {
      client.disconnect();
    }
  });
});
