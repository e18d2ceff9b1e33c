/**
 * Benchmark: the gateway on a Redis Cluster through a failover of the primary serving its slot
 * (issue 30; a section of bench/RESULTS.md).
 *
 * Each run: a new Cluster of three primaries with a replica each (test/support/redis-cluster.ts,
 * `cluster-node-timeout` CLUSTER_FAILOVER_NODE_TIMEOUT_MS), the simulated Nomad, two built gateways
 * given `REDIS_CLUSTER_NODES`, a `volumeChanged` subscriber on each, a volume created every 100 ms
 * (one CREATED each, told apart by id). Then kill -9 of the primary serving the `{live}` slot
 * (3558, where every key of the gateway is), and:
 * - promotion: from the kill until a live node names the replica as the slot's primary;
 * - failover: from the kill until each subscriber receives the first change made after the kill
 *   (the larger of the two);
 * - lost and duplicated: per subscriber, changes made but never received, and received more than
 *   once; and the same for a client that, after the failover, resumes on the other gateway with the
 *   last cursor the first subscriber had before the kill (or gets CURSOR_EXPIRED);
 * with the gateway's default lease TTL (10 s, longer than the failover: the holder keeps its
 * lease) and with 1.5 s (shorter: the lease lapses during the failover and the watcher is handed
 * over).
 *
 *   node --import tsx bench/redis-failover.ts   (CLUSTER_FAILOVER_SHORT=1: one run at the 1.5 s TTL)
 *   CLUSTER_FAILOVER_RUNS=n                       runs per lease TTL (default 3, short 1)
 *   CLUSTER_FAILOVER_TTLS=10000,1500              the lease TTLs (LIVE_LEASE_TTL_MS), ms
 *   CLUSTER_FAILOVER_NODE_TIMEOUT_MS=n            cluster-node-timeout (default 1000)
 */
import { join } from 'node:path';
import { createClient, type Client } from 'graphql-ws';
import WebSocket from 'ws';
import { LIVE_SLOT } from '../server/redis';
import { nativeOf } from '../test/scale/support';
import { stopRedisServers } from '../test/support/redis';
import { startRedisCluster, type RedisClusterUnderTest } from '../test/support/redis-cluster';
import { BENCH_TOKEN } from './constants';
import { killStarted, machineFacts, start } from './processes';
import { gateway, holder, post, sleep, type Gateway } from './replicas-processes';
import { writeSection } from './results-file';
import { nomadBenchVolume } from './seed';

const short = process.env.CLUSTER_FAILOVER_SHORT === '1';
const out = process.env.BENCH_OUT ?? join(__dirname, 'RESULTS.md');
const runs = Number(process.env.CLUSTER_FAILOVER_RUNS ?? (short ? 1 : 3));
const ttls = (process.env.CLUSTER_FAILOVER_TTLS ?? (short ? '1500' : '10000,1500')).split(',').map(Number);
const nodeTimeoutMs = Number(process.env.CLUSTER_FAILOVER_NODE_TIMEOUT_MS ?? 1000);
const CHANGE_EVERY_MS = 100;

/** What one subscriber received: per volume, when each of its CREATED arrived; and how it ended. */
interface Received {
  times: Map<string, number[]>;
  /** Cursor of the newest event received. */
  last: string | null;
  errors: string[];
  client: Client;
}

function subscribe(g: Gateway, since?: string): Received {
  const client = createClient({
    url: g.ws,
    webSocketImpl: WebSocket,
    connectionParams: { 'X-Nomad-Token': BENCH_TOKEN },
    lazy: false,
    retryAttempts: 0,
  });
  const r: Received = { times: new Map(), last: null, errors: [], client };
  client.subscribe<{ volumeChanged: { type: string; volumeId: string | null; cursor: string } }>(
    {
      query: 'subscription($since: String) { volumeChanged(since: $since) { type volumeId cursor } }',
      variables: since ? { since } : {},
    },
    {
      next: (v) => {
        if (v.errors) r.errors.push(JSON.stringify(v.errors));
        const e = v.data?.volumeChanged;
        if (!e) return;
        r.last = e.cursor;
        if (e.type === 'CREATED' && e.volumeId) {
          const id = nativeOf(e.volumeId);
          r.times.set(id, [...(r.times.get(id) ?? []), Date.now()]);
        }
      },
      error: (err) => void r.errors.push(JSON.stringify(err)),
      complete: () => undefined,
    },
  );
  return r;
}

/** Changes of `ids` a subscriber never received, and those it received more than once. */
function tally(r: Received, ids: readonly string[]): { lost: number; duplicated: number } {
  return {
    lost: ids.filter((id) => !r.times.has(id)).length,
    duplicated: ids.reduce((n, id) => n + Math.max(0, (r.times.get(id)?.length ?? 0) - 1), 0),
  };
}

/** One run's figures. */
interface Run {
  ttlMs: number;
  promotionMs: number;
  failoverMs: number;
  made: number;
  subscribers: Array<{ lost: number; duplicated: number }>;
  resumed: { lost: number; duplicated: number; expired: boolean };
}

async function run(simUrl: string, ttlMs: number, n: number): Promise<Run> {
  let cluster: RedisClusterUnderTest | null = null;
  const gws: Gateway[] = [];
  const subs: Received[] = [];
  try {
    cluster = await startRedisCluster({ replicas: 1, nodeTimeoutMs });
    const redis = { REDIS_CLUSTER_NODES: cluster.seeds };
    for (let i = 0; i < 2; i++) gws.push(await gateway(simUrl, redis, { leaseTtlMs: String(ttlMs) }));
    await holder(gws);
    subs.push(subscribe(gws[0]!), subscribe(gws[1]!));
    while (subs.some((s) => s.last === null)) await sleep(20); // SUBSCRIBED
    const made: Array<{ id: string; at: number }> = [];
    let i = 0;
    const create = async (): Promise<void> => {
      const id = `failover-${n}-${ttlMs}-${i++}`;
      await post(`${simUrl}/_sim/volumes`, nomadBenchVolume(id));
      made.push({ id, at: Date.now() });
    };
    let flowing = true;
    const flow = (async () => {
      while (flowing) await Promise.all([create(), sleep(CHANGE_EVERY_MS)]);
    })();
    await sleep(2000);
    const owner = await cluster.ownerOf(LIVE_SLOT);
    // The first subscriber receives in log order: what it receives from now on is after this cursor.
    const cursorBefore = subs[0]!.last!;
    const markedAt = Date.now();
    await owner.kill();
    const killed = Date.now();
    let promotionMs = NaN;
    for (const end = killed + 60_000; Date.now() < end; await sleep(50)) {
      const now = await cluster.ownerOf(LIVE_SLOT).catch(() => owner);
      if (now !== owner) {
        promotionMs = Date.now() - killed;
        break;
      }
    }
    // Changes go on for 5 s after the promotion, then every subscriber gets a chance to catch up.
    await sleep(5000);
    flowing = false;
    await flow;
    const ids = made.map((m) => m.id);
    for (const end = Date.now() + 30_000; Date.now() < end; await sleep(100))
      if (subs.every((s) => ids.every((id) => s.times.has(id)))) break;
    const after = made.filter((m) => m.at > killed).map((m) => m.id);
    const firstAfter = (s: Received): number => Math.min(...after.map((id) => s.times.get(id)?.[0] ?? Infinity));
    const failoverMs = Math.max(...subs.map(firstAfter)) - killed;
    // A client that resumes on the other gateway with the first subscriber's cursor from before the kill.
    const expected = ids.filter((id) => (subs[0]!.times.get(id)?.[0] ?? Infinity) > markedAt);
    const resumed = subscribe(gws[1]!, cursorBefore);
    subs.push(resumed);
    for (const end = Date.now() + 30_000; Date.now() < end; await sleep(100))
      if (resumed.errors.length > 0 || expected.every((id) => resumed.times.has(id))) break;
    return {
      ttlMs,
      promotionMs,
      failoverMs,
      made: made.length,
      subscribers: subs.slice(0, 2).map((s) => tally(s, ids)),
      resumed: { ...tally(resumed, expected), expired: resumed.errors.some((e) => e.includes('CURSOR_EXPIRED')) },
    };
  } finally {
    await Promise.all(subs.map(async (s) => void (await s.client.dispose())));
    for (const g of gws) g.child.kill('SIGKILL');
    await cluster?.stop();
  }
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

function report(results: Run[]): void {
  const rows = results.map(
    (r, i) =>
      `| ${i + 1} | ${r.ttlMs / 1000} s | ${(r.promotionMs / 1000).toFixed(1)} | ${(r.failoverMs / 1000).toFixed(1)} | ${r.made} | ${r.subscribers.map((s) => s.lost).join(' / ')} | ${r.subscribers.map((s) => s.duplicated).join(' / ')} | ${r.resumed.expired ? 'CURSOR_EXPIRED' : `${r.resumed.lost} / ${r.resumed.duplicated}`} |`,
  );
  const byTtl = ttls.map((t) => {
    const rs = results.filter((r) => r.ttlMs === t);
    const failover = rs.map((r) => r.failoverMs);
    const lost = rs.reduce((n, r) => n + r.subscribers.reduce((m, s) => m + s.lost, 0), 0);
    const dup = rs.reduce((n, r) => n + r.subscribers.reduce((m, s) => m + s.duplicated, 0), 0);
    console.log(
      `ratio: failover s, lease TTL ${t / 1000} s (median of ${rs.length}) = ${(median(failover) / 1000).toFixed(1)}`,
    );
    console.log(`ratio: events lost / duplicated per subscriber, lease TTL ${t / 1000} s = ${lost} / ${dup}`);
    return `- lease TTL ${t / 1000} s: failover (kill → next change delivered) ${failover.map((m) => `${(m / 1000).toFixed(1)} s`).join(', ')}; over ${rs.length * 2} subscribers ${lost} events lost and ${dup} duplicated.`;
  });
  const md = `## The gateway on a Redis Cluster: failover of the {live} primary (bench/redis-failover.ts)

Generated by \`bench/redis-failover.ts\`${short ? ' (CLUSTER_FAILOVER_SHORT=1)' : ''} on ${new Date().toISOString()}: per run a new
Redis Cluster of three primaries with one replica each (redis-server 7.0, \`cluster-node-timeout\`
${nodeTimeoutMs} ms, no persistence, all on this machine), one simulated Nomad, two built gateways given
\`REDIS_CLUSTER_NODES\`, a \`volumeChanged\` subscriber on each, a volume created every
${CHANGE_EVERY_MS} ms; kill -9 of the primary serving slot ${LIVE_SLOT} (\`{live}\`: every key of the gateway).
Promotion: kill → a live node names the replica as the slot's primary. Failover: kill → the first
change made after the kill received, by the later of the two subscribers. Lost / duplicated: per
subscriber (a / b), changes made but never received, and received more than once. Resumed: a client
that, after the failover, subscribes on gateway b with the last cursor subscriber a had before the
kill (lost / duplicated, or CURSOR_EXPIRED).

${machineFacts()}

| run | lease TTL | promotion, s | failover, s | changes | lost a / b | duplicated a / b | resumed: lost / dup. |
|---|---|---|---|---|---|---|---|
${rows.join('\n')}

${byTtl.join('\n')}
`;
  writeSection(out, 'redis-failover', md);
}

async function main(): Promise<void> {
  const { match } = await start(['bench/sim-server.ts'], {}, /SIM_URL=(\S+)/);
  const simUrl = match[1]!;
  const results: Run[] = [];
  try {
    for (const ttl of ttls)
      for (let n = 0; n < runs; n++) {
        results.push(await run(simUrl, ttl, n));
        const r = results.at(-1)!;
        console.log(
          `lease TTL ${ttl} ms, run ${n + 1}: promotion ${r.promotionMs} ms, failover ${r.failoverMs} ms, ${JSON.stringify(r.subscribers)}, resumed ${JSON.stringify(r.resumed)}`,
        );
      }
    report(results);
  } finally {
    await stopRedisServers();
    killStarted();
  }
}

void main().catch(async (err: unknown) => {
  console.error(err);
  await stopRedisServers();
  killStarted();
  process.exit(1);
});
