/**
 * Benchmark: replicas on one Redis (issue 29; a section of bench/RESULTS.md).
 *
 * 1. Backend requests per minute, by kind and by credential (the gateway's own token: watchers,
 *    resyncs, readiness probes; callers' tokens: subscribers' access checks), with one gateway
 *    without Redis, one replica on Redis and three replicas on Redis, each with 1, 100 and 10,000
 *    subscribers (10,000 in the full mode only) spread over its replicas, while a volume is claimed
 *    and released. Target: watcher and resync load with 3 replicas within 10 % of one replica's.
 *    Readiness probes stay per replica (each must say what it can reach) and are shown apart.
 *    On Redis, also Redis' cost over the same window: commands per minute by command (INFO
 *    commandstats before and after; MONITOR tells which ran inside Lua scripts), per stream entry
 *    appended above the rate of an idle window just before, and per subscriber; Redis' CPU.
 * 2. Failover: two replicas at the default lease TTL (10 s); a subscriber on the follower; kill -9
 *    of the holder while a change is made every 250 ms; the time from the kill to the next event
 *    the subscriber receives. Target: at most the TTL plus 1 s.
 *
 *   node --import tsx bench/replicas.ts     (REPLICAS_SHORT=1: 5 s windows, one failover sample)
 *   REPLICAS_WINDOW_MS=n                    each backend-load window (default 30000, short 5000)
 *   REPLICAS_FAILOVERS=n                    failover samples (default 3, short 1)
 *   REPLICAS_SUBSCRIBERS=1,100,10000        subscriber counts of part 1 (short: 1,100)
 *   REPLICAS_TAKEOVER_VOLUMES=n             volumes of part 3 (default 10000, short 1000; 0: skipped)
 *   REPLICAS_LEASE_TTL_MS=n                 the replicas' LIVE_LEASE_TTL_MS (default the gateway's, 10 s;
 *                                           the check mode's shorter one makes a fresh Redis's first lease quicker)
 *
 * 3. Take-over at scale: a Nomad with REPLICAS_TAKEOVER_VOLUMES volumes (every fifth claimed), two
 *    replicas; kill -9 of the holder; the time until the other holds the lease and until its
 *    watcher is current again (a full re-list and read of every volume, compared with its view),
 *    the backend requests that cost, and the Redis memory of the view snapshot and the stream.
 *
 * Fan-out of 10,000 subscribers through Redis against one process is bench/fanout-replicas.ts.
 */
import { once } from 'node:events';
import { join } from 'node:path';
import { createClient } from 'graphql-ws';
import { Redis } from 'ioredis';
import { request } from 'undici';
import WebSocket from 'ws';
import { forkClients, open } from './clients';
import { BENCH_TOKEN } from './constants';
import { startRedisServer } from '../test/support/redis';
import { killStarted, start } from './processes';
import { watchRedis, type RedisWindow } from './redis-stats';
import { report, type Load, type Takeover } from './replicas-report';
import { churn, current, gateway, holder, kindOf, post, sleep, type Gateway } from './replicas-processes';
import { writeSection } from './results-file';

const short = process.env.REPLICAS_SHORT === '1';
const out = process.env.BENCH_OUT ?? join(__dirname, 'RESULTS.md');
const windowMs = Number(process.env.REPLICAS_WINDOW_MS ?? (short ? 5_000 : 30_000));
const failovers = Number(process.env.REPLICAS_FAILOVERS ?? (short ? 1 : 3));
const counts = (process.env.REPLICAS_SUBSCRIBERS ?? (short ? '1,100' : '1,100,10000')).split(',').map(Number);
/** The window without changes before each window on Redis, for Redis' idle rate. */
const idleMs = Math.max(250, windowMs / 2);
/** The event stream's key (the gateway's default REDIS_KEY_PREFIX). */
const STREAM = 'vg:{live}:events';

/** `total` split into `parts` near-equal shares: share `i`. */
const share = (total: number, parts: number, i: number): number =>
  Math.floor(total / parts) + (i < total % parts ? 1 : 0);

/**
 * Part 1: one configuration's backend requests per minute while a claim and a release alternate,
 * and, on Redis (`r`), what Redis did over that window and over an idle one just before.
 */
async function load(
  simUrl: string,
  label: string,
  gws: Gateway[],
  subscribers: number,
  r: Redis | null,
): Promise<Load> {
  const tokens = ['bench-sub-a', 'bench-sub-b', 'bench-sub-c'];
  for (const t of tokens) await post(`${simUrl}/_sim/tokens`, { secret: t, namespaces: { default: 'read' } });
  const query = 'subscription { volumeChanged { type cursor } }';
  // Thousands of subscribers: two generators, two source addresses (an ephemeral-port range each).
  const big = subscribers >= 1000;
  const kids = Array.from({ length: big ? 2 : 1 }, forkClients);
  const opened = await Promise.all(
    kids.map(async (kid, k) => {
      let n = 0;
      for (let i = 0; i < gws.length; i++) {
        const count = share(share(subscribers, gws.length, i), kids.length, k);
        if (count > 0)
          n += (
            await open(kid, {
              url: gws[i]!.ws,
              count,
              sources: big ? ['127.0.0.1', '127.0.0.2'] : ['127.0.0.1'],
              init: tokens.map((t) => ({ 'X-Nomad-Token': t })),
              batch: big ? 200 : 100,
              query,
            })
          ).opened;
      }
      return n;
    }),
  );
  const subscribed = opened.reduce((s, n) => s + n, 0);
  let idle: RedisWindow | null = null;
  if (r) {
    const quiet = await watchRedis(r, STREAM);
    await sleep(idleMs);
    idle = await quiet.stop();
  }
  const watch = r ? await watchRedis(r, STREAM) : null;
  await request(`${simUrl}/_sim/requests`, { method: 'DELETE' }).then((r) => r.body.text());
  const changes = churn(simUrl, 'bench-003', `load-${label.replace(/[^a-z0-9]+/gi, '-')}-${subscribers}`);
  const t0 = Date.now();
  let made = 0;
  while (Date.now() - t0 < windowMs) {
    await changes.step();
    made++;
    await sleep(1000);
  }
  await changes.finish();
  const elapsed = Date.now() - t0;
  const redis = watch ? await watch.stop() : null;
  const log = JSON.parse(await (await request(`${simUrl}/_sim/requests`)).body.text()) as Array<{
    path: string;
    headers: Record<string, string | undefined>;
  }>;
  const perMinute = new Map<string, number>();
  let service = 0;
  for (const r of log) {
    const token = r.headers['x-nomad-token'];
    const who = token === BENCH_TOKEN ? 'service' : token ? 'caller' : 'no token';
    if (who === 'service') service++;
    const key = `${who}|${kindOf(r.path)}`;
    perMinute.set(key, (perMinute.get(key) ?? 0) + 60_000 / elapsed);
  }
  for (const kid of kids) kid.send({ close: true });
  await Promise.all(kids.map((kid) => once(kid, 'exit')));
  return { label, subscribers, subscribed, perMinute, changes: made, service, idle, redis };
}

/** Part 2: kill -9 of the holder → the next event on the follower's subscriber, in ms. */
async function failover(simUrl: string, redisUrl: string, n: number): Promise<number> {
  const gws = [await gateway(simUrl, redisUrl), await gateway(simUrl, redisUrl)];
  try {
    const h = await holder(gws);
    const follower = gws[1 - h]!;
    const seen: number[] = [];
    const client = createClient({
      url: follower.ws,
      webSocketImpl: WebSocket,
      connectionParams: { 'X-Nomad-Token': BENCH_TOKEN },
      lazy: false,
      retryAttempts: 0,
    });
    client.subscribe(
      { query: 'subscription { volumeChanged { type } }' },
      { next: () => void seen.push(Date.now()), error: () => undefined, complete: () => undefined },
    );
    while (seen.length === 0) await sleep(20); // SUBSCRIBED
    gws[h]!.child.kill('SIGKILL');
    const killed = Date.now();
    const changes = churn(simUrl, 'bench-004', `fail-${n}`);
    while (seen.at(-1)! < killed && Date.now() - killed < 60_000) {
      await changes.step();
      await sleep(250);
    }
    await changes.finish();
    await client.dispose();
    return seen.at(-1)! - killed;
  } finally {
    for (const g of gws) g.child.kill('SIGKILL');
  }
}

async function takeover(redisUrl: string, volumes: number): Promise<Takeover> {
  const { child: sim, match } = await start(
    ['bench/sim-server.ts'],
    { BENCH_NOMAD_VOLUMES: String(volumes) },
    /SIM_URL=(\S+)/,
  );
  const simUrl = match[1]!;
  const r = new Redis(redisUrl);
  await r.flushall();
  const gws = [await gateway(simUrl, redisUrl), await gateway(simUrl, redisUrl)];
  try {
    const h = await holder(gws);
    const other = gws[1 - h]!;
    const state = async (): Promise<any> => (await request(new URL('/readyz', other.http))).body.json();
    for (const end = Date.now() + 300_000; ; await sleep(200)) {
      const b = await state();
      if (b.replication.backends[0].viewComplete && b.watchers[0]?.watcher?.state === 'STREAMING') break;
      if (Date.now() > end) throw new Error('the follower never had a complete view');
    }
    await request(`${simUrl}/_sim/requests`, { method: 'DELETE' }).then((x) => x.body.text());
    gws[h]!.child.kill('SIGKILL');
    const t0 = Date.now();
    let leaseMs = NaN;
    for (const end = t0 + 300_000; ; await sleep(50)) {
      const b = await state();
      const e = b.replication.backends[0];
      if (Number.isNaN(leaseMs) && e.role === 'HOLDER') leaseMs = Date.now() - t0;
      if (e.role === 'HOLDER' && b.watchers[0]?.watcher?.state === 'STREAMING') break;
      if (Date.now() > end) throw new Error('no take-over within 300 s');
    }
    const currentMs = Date.now() - t0;
    const log = JSON.parse(await (await request(`${simUrl}/_sim/requests`)).body.text()) as Array<{ path: string }>;
    const requests = new Map<string, number>();
    for (const x of log) requests.set(kindOf(x.path), (requests.get(kindOf(x.path)) ?? 0) + 1);
    const usage = async (key: string): Promise<number> => Number(await r.call('MEMORY', 'USAGE', key));
    return {
      volumes,
      leaseMs,
      currentMs,
      requests,
      snapshotBytes: await usage('vg:{live}:view:bench'),
      streamBytes: await usage('vg:{live}:events'),
    };
  } finally {
    for (const g of gws) g.child.kill('SIGKILL');
    sim.kill('SIGKILL');
    r.disconnect();
  }
}

async function main(): Promise<void> {
  const { match } = await start(['bench/sim-server.ts'], {}, /SIM_URL=(\S+)/);
  const simUrl = match[1]!;
  const redis = await startRedisServer();
  const flush = async (): Promise<void> => {
    const r = new Redis(redis.url);
    await r.flushall();
    r.disconnect();
  };
  const loads: Load[] = [];
  try {
    for (const [label, replicas, withRedis] of [
      ['1 gateway, no Redis', 1, false],
      ['1 replica on Redis', 1, true],
      ['3 replicas on Redis', 3, true],
    ] as const) {
      for (const subscribers of counts) {
        await flush();
        const gws: Gateway[] = [];
        for (let i = 0; i < replicas; i++) gws.push(await gateway(simUrl, withRedis ? redis.url : null));
        if (withRedis) await holder(gws);
        await current(gws, withRedis);
        const r = withRedis ? new Redis(redis.url) : null;
        loads.push(await load(simUrl, label, gws, subscribers, r));
        r?.disconnect();
        for (const g of gws) g.child.kill('SIGKILL');
        console.log(`${label}, ${subscribers} subscribers: done`);
      }
    }
    const times: number[] = [];
    for (let i = 0; i < failovers; i++) {
      await flush();
      times.push(await failover(simUrl, redis.url, i));
      console.log(`failover ${i + 1}: ${times.at(-1)} ms`);
    }
    const volumes = Number(process.env.REPLICAS_TAKEOVER_VOLUMES ?? (short ? 1000 : 10_000));
    const big = volumes > 0 ? await takeover(redis.url, volumes) : null;
    if (big) console.log(`take-over at ${volumes} volumes: lease ${big.leaseMs} ms, current ${big.currentMs} ms`);
    const ttlMs = Number(process.env.REPLICAS_LEASE_TTL_MS ?? 10_000);
    writeSection(out, 'replicas', report(loads, times, big, { short, windowMs, idleMs, counts, ttlMs }));
  } finally {
    await redis.kill();
    killStarted();
  }
}

void main().catch((err: unknown) => {
  console.error(err);
  killStarted();
  process.exit(1);
});
