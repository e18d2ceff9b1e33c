/**
 * Benchmark: replicas on one Redis (issue 29; a section of bench/RESULTS.md).
 *
 * 1. Backend requests per minute, by kind and by credential (the gateway's own token: watchers,
 *    resyncs, readiness probes; callers' tokens: subscribers' access checks), with one gateway
 *    without Redis, one replica on Redis and three replicas on Redis, each with 1 and 100
 *    subscribers spread over its replicas, while a volume is claimed and released. Target: watcher
 *    and resync load with 3 replicas within 10 % of one replica's. Readiness probes stay per
 *    replica (each must say what it can reach) and are shown apart.
 * 2. Failover: two replicas at the default lease TTL (10 s); a subscriber on the follower; kill -9
 *    of the holder while a change is made every 250 ms; the time from the kill to the next event
 *    the subscriber receives. Target: at most the TTL plus 1 s.
 *
 *   node --import tsx bench/replicas.ts     (REPLICAS_SHORT=1: 5 s windows, one failover sample)
 *   REPLICAS_WINDOW_MS=n                    each backend-load window (default 30000, short 5000)
 *   REPLICAS_FAILOVERS=n                    failover samples (default 3, short 1)
 *   REPLICAS_SUBSCRIBERS=1,100              subscriber counts of part 1
 *   REPLICAS_TAKEOVER_VOLUMES=n             volumes of part 3 (default 10000, short 1000; 0: skipped)
 *   REPLICAS_LEASE_TTL_MS=n                 the replicas' LIVE_LEASE_TTL_MS (default the gateway's, 10 s;
 *                                           the check mode's shorter one makes a fresh Redis's first lease quicker)
 *
 * 3. Take-over at scale: a Nomad with REPLICAS_TAKEOVER_VOLUMES volumes (every fifth claimed), two
 *    replicas; kill -9 of the holder; the time until the other holds the lease and until its
 *    watcher is current again (a full re-list and read of every volume, compared with its view),
 *    the backend requests that cost, and the Redis memory of the view snapshot and the stream.
 *
 * Not measured here (issue 29's other benchmarks): fan-out of 10,000 subscribers through Redis
 * against one process, and Redis commands per event and memory at 10,000 volumes.
 */
import { once } from 'node:events';
import { join } from 'node:path';
import { createClient } from 'graphql-ws';
import { Redis } from 'ioredis';
import { request } from 'undici';
import WebSocket from 'ws';
import { forkClients, open } from './clients';
import { BENCH_TOKEN } from './constants';
import { killStarted, machineFacts, start } from './processes';
import { startRedisServer } from '../test/support/redis';
import { churn, gateway, holder, kindOf, post, sleep, type Gateway } from './replicas-processes';
import { writeSection } from './results-file';

const short = process.env.REPLICAS_SHORT === '1';
const out = process.env.BENCH_OUT ?? join(__dirname, 'RESULTS.md');
const windowMs = Number(process.env.REPLICAS_WINDOW_MS ?? (short ? 5_000 : 30_000));
const failovers = Number(process.env.REPLICAS_FAILOVERS ?? (short ? 1 : 3));
const counts = (process.env.REPLICAS_SUBSCRIBERS ?? '1,100').split(',').map(Number);

interface Load {
  label: string;
  subscribers: number;
  /** Per minute, by "service|caller kind". */
  perMinute: Map<string, number>;
  /** Changes made in the window (claims and releases). */
  changes: number;
  /** The service credential's requests in the window. */
  service: number;
}

/** Part 1: one configuration's backend requests per minute while a claim and a release alternate. */
async function load(simUrl: string, label: string, gws: Gateway[], subscribers: number): Promise<Load> {
  const tokens = ['bench-sub-a', 'bench-sub-b', 'bench-sub-c'];
  for (const t of tokens) await post(`${simUrl}/_sim/tokens`, { secret: t, namespaces: { default: 'read' } });
  const query = 'subscription { volumeChanged { type cursor } }';
  const kid = forkClients();
  for (let i = 0; i < gws.length; i++) {
    const count = Math.floor(subscribers / gws.length) + (i < subscribers % gws.length ? 1 : 0);
    if (count > 0)
      await open(kid, {
        url: gws[i]!.ws,
        count,
        sources: ['127.0.0.1'],
        init: tokens.map((t) => ({ 'X-Nomad-Token': t })),
        batch: 100,
        query,
      });
  }
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
  kid.send({ close: true });
  await once(kid, 'exit');
  return { label, subscribers, perMinute, changes: made, service };
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

/** What part 3 measured. */
interface Takeover {
  volumes: number;
  leaseMs: number;
  currentMs: number;
  requests: Map<string, number>;
  snapshotBytes: number;
  streamBytes: number;
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
        else await sleep(1000);
        loads.push(await load(simUrl, label, gws, subscribers));
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
    report(loads, times, big);
  } finally {
    await redis.kill();
    killStarted();
  }
}

function report(loads: Load[], failoverMs: number[], big: Takeover | null): void {
  const keys = [...new Set(loads.flatMap((l) => [...l.perMinute.keys()]))].sort();
  const fmt = (n: number | undefined): string => (n === undefined ? '0' : n.toFixed(1));
  const rows = keys.map(
    (k) => `| ${k.replace('|', ': ')} | ${loads.map((l) => fmt(l.perMinute.get(k))).join(' | ')} |`,
  );
  // Per change: the watcher reads a volume once per claim or release, and how many changes fit in a
  // window varies by one or two, which per minute would read as a 10 % difference.
  const watcher = (l: Load): number => l.service / Math.max(1, l.changes);
  const ratio = counts.map((n) => {
    const one = loads.find((l) => l.label === '1 replica on Redis' && l.subscribers === n)!;
    const three = loads.find((l) => l.label === '3 replicas on Redis' && l.subscribers === n)!;
    const r = watcher(three) / watcher(one);
    console.log(`ratio: watcher load 3 replicas / 1 replica, ${n} subscribers = ${r.toFixed(2)}`);
    return `| ${n} | ${watcher(one).toFixed(2)} (${one.service} in ${one.changes} changes) | ${watcher(three).toFixed(2)} (${three.service} in ${three.changes}) | ${r.toFixed(2)} | ${Math.abs(r - 1) <= 0.1 ? 'met' : 'not met'} |`;
  });
  const ttl = Number(process.env.REPLICAS_LEASE_TTL_MS ?? 10_000);
  const worst = Math.max(...failoverMs);
  if (failoverMs.length > 0) console.log(`ratio: failover ms / (TTL + 1 s) = ${(worst / (ttl + 1000)).toFixed(2)}`);
  const failoverText =
    failoverMs.length === 0
      ? 'not run.'
      : `${failoverMs.map((m) => `${(m / 1000).toFixed(1)} s`).join(', ')}; target at most TTL + 1 s = ${(ttl + 1000) / 1000} s: ${worst <= ttl + 1000 ? 'met' : 'not met'}.`;
  const md = `## Replicas on one Redis (bench/replicas.ts)

Generated by \`bench/replicas.ts\`${short ? ' (REPLICAS_SHORT=1)' : ''} on ${new Date().toISOString()}: one simulated
Nomad (100 volumes), a claim or a release of one volume every second for ${windowMs / 1000} s per column,
subscribers on \`volumeChanged\` spread evenly over the replicas with three tokens. Requests per
minute from the simulator's log, by credential (service: the gateway's own token; caller:
subscribers' access checks; no token: the readiness probe's leader read) and kind.

${machineFacts()}

| requests/min | ${loads.map((l) => `${l.label}, ${l.subscribers} sub.`).join(' | ')} |
|---|${loads.map(() => '---|').join('')}
${rows.join('\n')}

**Watcher and resync load** (the service credential's requests per change), 3 replicas against 1:

| subscribers | 1 replica | 3 replicas | ratio | target (within 10 %) |
|---|---|---|---|---|
${ratio.join('\n')}

Readiness probes stay per replica (each replica's \`/readyz\` says what it can reach): they grow
with the replica count and are the \`no token: readiness probes\` row.

**Failover** (two replicas, lease TTL ${ttl / 1000} s): kill -9 of the holder → next event on the
follower's subscriber: ${failoverText}
`;
  const kb = (n: number): string => `${(n / 1_048_576).toFixed(1)} MiB`;
  const bigText = big
    ? `**Take-over at ${big.volumes} volumes** (every fifth claimed; kill -9 of the holder, lease TTL ${ttl / 1000} s):
the other replica held the lease after ${(big.leaseMs / 1000).toFixed(1)} s and its watcher was current again after
${(big.currentMs / 1000).toFixed(1)} s. Backend requests of the take-over: ${[...big.requests]
        .map(([k, v]) => `${v} ${k}`)
        .join(', ')}. Redis: the view snapshot ${kb(big.snapshotBytes)}, the event stream ${kb(big.streamBytes)}.
`
    : '';
  writeSection(out, 'replicas', `${md}\n${bigText}`);
}

void main().catch((err: unknown) => {
  console.error(err);
  killStarted();
  process.exit(1);
});
