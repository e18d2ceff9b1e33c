/**
 * Benchmark: a Redis Sentinel failover under two gateway replicas (issue 30; a section of
 * bench/RESULTS.md).
 *
 * Each run starts a primary, a replica and three sentinels (down-after 1 s), a Nomad simulator
 * and two gateway replicas on them, and a `volumeChanged` subscriber on the replica that does not
 * hold the watcher lease. A volume is created every 100 ms. Two seconds in, the primary is killed
 * -9; three seconds after the sentinels name the new primary, creating stops. Measured per run:
 * the time from the kill to the first delivered event of a volume created after it, and, once
 * everything settled, events lost (volumes created that never reached the subscriber) and
 * duplicated (CREATED received more than once).
 *
 *   node --import tsx bench/sentinel-failover.ts     (SENTINEL_SHORT=1: one run)
 *   SENTINEL_RUNS=n                                  runs (default 3, short 1)
 *   SENTINEL_PHASE_MS=n                              creating before the kill and after the failover
 *                                                    (default 2000 and 3000; the suite's check: 500 each)
 */
import { join } from 'node:path';
import { seedVolumes, startNomad } from '../test/support/harness';
import { startSentinelSet } from '../test/support/redis-sentinel';
import {
  nativeOf,
  nomadBackend,
  role,
  SERVICE_TOKEN,
  startReplica,
  subscribe,
  type Replica,
} from '../test/scale/support';
import { machineFacts } from './processes';
import { writeSection } from './results-file';

const short = process.env.SENTINEL_SHORT === '1';
const out = process.env.BENCH_OUT ?? join(__dirname, 'RESULTS.md');
const runs = Number(process.env.SENTINEL_RUNS ?? (short ? 1 : 3));
const phase = process.env.SENTINEL_PHASE_MS === undefined ? null : Number(process.env.SENTINEL_PHASE_MS);

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

interface Run {
  failoverMs: number;
  sentinelsMs: number;
  created: number;
  lost: number;
  duplicated: number;
}

async function until(check: () => boolean | Promise<boolean>, what: string, ms = 60_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(50);
  }
}

async function once(run: number): Promise<Run> {
  const set = await startSentinelSet();
  const sim = await startNomad();
  sim.addToken({ secret: SERVICE_TOKEN, management: true });
  let replicas: Replica[] = [];
  try {
    replicas = await Promise.all(['a', 'b'].map((n) => startReplica(n, set.env, nomadBackend(sim.url))));
    let roles: Array<string | null> = [];
    await until(async () => {
      roles = await Promise.all(replicas.map(role));
      return roles.includes('HOLDER') && roles.includes('FOLLOWER');
    }, 'one holder and one follower');
    const sub = await subscribe(replicas[roles.indexOf('FOLLOWER')]!);
    const createdAt = new Map<string, number>();
    const receivedAt = new Map<string, number>();
    const seen: string[] = [];
    let creating = true;
    let n = 0;
    const maker = (async () => {
      while (creating) {
        const id = seedVolumes(sim, 1, 'default', `r${run}v${++n}`)[0]!;
        createdAt.set(id, Date.now());
        await sleep(100);
      }
    })();
    const poll = setInterval(() => {
      for (const e of sub.changes().slice(seen.length)) {
        const id = nativeOf(e.volumeId);
        seen.push(id);
        if (e.type === 'CREATED' && !receivedAt.has(id)) receivedAt.set(id, Date.now());
      }
    }, 10);
    await sleep(phase ?? 2000);
    const from = await set.primaryPort();
    await set.nodes.find((x) => x.port === from)!.kill();
    const killedAt = Date.now();
    await set.failedOver(from);
    const sentinelsMs = Date.now() - killedAt;
    await sleep(phase ?? 3000);
    creating = false;
    await maker;
    await until(() => receivedAt.size >= createdAt.size, 'every volume to reach the subscriber', 30_000).catch(
      () => {},
    );
    clearInterval(poll);
    const after = [...createdAt].filter(([, t]) => t > killedAt).map(([id]) => receivedAt.get(id) ?? Infinity);
    const creates = sub
      .changes()
      .filter((e) => e.type === 'CREATED')
      .map((e) => nativeOf(e.volumeId));
    await sub.dispose();
    return {
      failoverMs: Math.min(...after) - killedAt,
      sentinelsMs,
      created: createdAt.size,
      lost: [...createdAt.keys()].filter((id) => !receivedAt.has(id)).length,
      duplicated: creates.length - new Set(creates).size,
    };
  } finally {
    for (const r of replicas) r.child.kill('SIGKILL');
    await sim.close();
    await set.stop();
  }
}

async function main(): Promise<void> {
  const results: Run[] = [];
  for (let i = 1; i <= runs; i++) {
    const r = await once(i);
    console.log(`run ${i}: ${JSON.stringify(r)}`);
    results.push(r);
  }
  const rows = results.map(
    (r, i) => `| ${i + 1} | ${r.sentinelsMs} | ${r.failoverMs} | ${r.created} | ${r.lost} | ${r.duplicated} |`,
  );
  const worst = Math.max(...results.map((r) => r.failoverMs));
  writeSection(
    out,
    'sentinel-failover',
    [
      '## Redis Sentinel failover (bench/sentinel-failover.ts)',
      '',
      `Generated by \`bench/sentinel-failover.ts\` on ${new Date().toISOString()}: a primary, a replica and three`,
      'sentinels (`down-after-milliseconds` 1000, `failover-timeout` 5000), one Nomad simulator, two gateway',
      'replicas (lease TTL 1.5 s); a `volumeChanged` subscriber on the follower; a volume created every 100 ms;',
      'kill -9 of the primary 2 s in. Milliseconds from the kill.',
      '',
      machineFacts(),
      '',
      '| run | sentinels name the new primary | next event delivered (a volume created after the kill) | volumes created | events lost | events duplicated |',
      '|---|---|---|---|---|---|',
      ...rows,
      '',
      `Worst failover to the next delivered event: ${worst} ms; events lost ${results.reduce((a, r) => a + r.lost, 0)}, duplicated ${results.reduce((a, r) => a + r.duplicated, 0)} over ${results.length} run(s).`,
      'The time is bounded by Sentinel: it must see the primary down for `down-after-milliseconds`, agree on it',
      '(quorum 2) and promote the replica; the gateways then reconnect (ioredis asks the sentinels again) and the',
      'lease holder appends what its watcher saw meanwhile (its failed appends are made good by comparing its',
      'watcher with the view rebuilt from the new primary).',
    ].join('\n'),
  );
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
