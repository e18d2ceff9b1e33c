/**
 * Benchmark: the gateway against direct REST calls to the simulated backends for the same data,
 * end to end, pinned with taskset, with watch-fed reads off so both sides make the same calls.
 *
 * Scenarios: `volume(id)` on Nomad and on OpenStack, the plain Nomad list of 100 and the plain
 * OpenStack list of 100. "Direct" replays exactly the backend request the gateway makes for one
 * query (read from the simulator's request log), and every timed run is counted at the simulator,
 * so the table shows backend calls per request for both sides.
 *
 * Pinning (two cores): the gateway alone on CPU 0; the simulators and the load generator
 * (bench/load-child.ts in its own process) on CPU 1, for the gateway runs and the direct runs
 * alike. Gateway and direct runs alternate (the first of each pair alternates too) over a few
 * rounds; the table gives medians.
 *
 *   npm run bench:full            full run (5 rounds), writes bench/RESULTS.md
 *   BENCH_SHORT=1                 quick mode: 1 round, 100 requests per run at 1 connection, 250 at 50
 *                                 (the lists a fifth), after 10 and 1 per connection not counted
 *   BENCH_ROUNDS=n                rounds (default 5, quick 1)
 *   BENCH_REQUESTS=n              counted requests per run of volume(id) at 1 connection and at 50 alike
 *                                 (the lists a fifth; its check mode, in the test suite: 40, bench/quick.ts)
 *   BENCH_OUT=path                write the results elsewhere
 *
 * Compare ratios within one run; absolute times move with the machine and its load.
 */
import { join } from 'node:path';
import { once } from 'node:events';
import { cpus as cpuList } from 'node:os';
import { Pool } from 'undici';
import { median, runLoad, type LoadResult } from './load';
import { BENCH_TOKEN, OPENSTACK_SIM_READY, UNWATCHED_GATEWAY_ENV } from './constants';
import { LIST_STRATEGY_THRESHOLD } from '../adapters/openstack/volumes/batch';
import { ONE_VOLUME, PLAIN_LIST } from './queries';
import { canPin, cpuMs, killStarted, machineFacts, start, startBuiltGateway, type Started } from './processes';
import { pinnedLoad, type LoadJob } from './pinned-load';
import { writeSection } from './results-file';
import { body, nomadBackend, openstackBackend, type Backend } from './backend-calls';

const short = process.env.BENCH_SHORT === '1';
const out = process.env.BENCH_OUT ?? join(__dirname, 'RESULTS.md');
const rounds = Number(process.env.BENCH_ROUNDS ?? (short ? 1 : 5));
const pinning = canPin && cpuList().length >= 2;
/** The gateway's CPU, and the one the simulators and the load generator share. */
const GATEWAY_CPU = pinning ? '0' : undefined;
const REST_CPU = pinning ? '1' : undefined;
/** Counted requests per run of `volume(id)`, by connections (the lists get a fifth), and uncounted ones per connection first. */
const REQUESTS: Record<number, number> = process.env.BENCH_REQUESTS
  ? { 1: Number(process.env.BENCH_REQUESTS), 50: Number(process.env.BENCH_REQUESTS) }
  : short
    ? { 1: 100, 50: 250 }
    : { 1: 3000, 50: 10000 };
const WARMUP: Record<number, number> = short ? { 1: 10, 50: 1 } : { 1: 200, 50: 5 };
const LIST_SHARE = 0.2;

/** One timed run: the load generator's result, and what it cost the gateway and the simulator, per request. */
interface Run extends LoadResult {
  gatewayCpuMs: number;
  simCpuMs: number;
  callsPerRequest: number;
}

async function measure(job: LoadJob, gatewayPid: number, backend: Backend): Promise<Run> {
  await backend.clearLog();
  const g0 = cpuMs(gatewayPid);
  const s0 = cpuMs(backend.pid);
  const r = await pinnedLoad(job, REST_CPU);
  const sent = r.requests + r.errors + job.warmup * job.connections;
  const gatewayCpuMs = (cpuMs(gatewayPid) - g0) / sent;
  const simCpuMs = (cpuMs(backend.pid) - s0) / sent;
  const callsPerRequest = (await backend.log()).length / sent;
  await backend.clearLog();
  return { ...r, gatewayCpuMs, simCpuMs, callsPerRequest };
}

/** A simulator and then the gateway in front of it (`backends`: its GATEWAY_BACKENDS from the simulator's ready line). */
async function startPair(
  simArgs: string[],
  simReady: RegExp,
  backends: (sim: RegExpExecArray) => string,
): Promise<[Started, Started]> {
  const sim = await start(simArgs, {}, simReady, [], REST_CPU);
  return [
    sim,
    await startBuiltGateway(
      { ...UNWATCHED_GATEWAY_ENV, GATEWAY_BACKENDS: backends(sim.match) },
      /ready at (\S+)/,
      [],
      GATEWAY_CPU,
    ),
  ];
}

async function main(): Promise<void> {
  // OpenStack has its own simulator process and gateway, so the two backends' rows do not share
  // one; the two pairs start side by side (nothing is measured yet).
  const [[sim, gw], [osSim, osGw]] = await Promise.all([
    startPair(['bench/sim-server.ts'], /SIM_URL=(\S+)/, (m) => `bench=nomad@${m[1]}`),
    startPair(['bench/openstack-sim-server.ts'], OPENSTACK_SIM_READY, (m) => `os=openstack@${m[1]}`),
  ]);
  const simUrl = sim.match[1]!;
  const gwUrl = gw.match[1]!.replace('localhost', '127.0.0.1');
  const simPool = new Pool(simUrl, { connections: 4 });
  const nomadAuth = { 'x-nomad-token': BENCH_TOKEN };
  const nomad = nomadBackend(sim.child.pid!, simPool, simUrl, nomadAuth);

  const [, keystoneUrl, cinderUrl, novaUrl, , osToken] = osSim.match as unknown as string[];
  const osGwUrl = osGw.match[1]!.replace('localhost', '127.0.0.1');
  const keystonePool = new Pool(new URL(keystoneUrl!).origin, { connections: 4 });
  const osAuth = { 'x-auth-token': osToken! };
  const origins: Record<string, string> = {
    keystone: new URL(keystoneUrl!).origin,
    cinder: new URL(cinderUrl!).origin,
    nova: new URL(novaUrl!).origin,
  };
  const openstack = openstackBackend(osSim.child.pid!, keystonePool, origins, osAuth);

  const gql = async (
    url: string,
    headers: Record<string, string>,
    query: string,
    variables: Record<string, unknown> = {},
  ): Promise<any> => {
    const res = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify({ query, variables }),
    });
    const b = (await res.json()) as { errors?: unknown[]; data: unknown };
    if (b.errors) throw new Error(JSON.stringify(b.errors));
    return b.data;
  };
  const firstId = async (url: string, headers: Record<string, string>): Promise<string> =>
    (await gql(url, headers, '{ volumes(first: 1) { nodes { id } } }')).volumes.nodes[0].id;

  const scenarios = [
    {
      name: 'Nomad volume(id)',
      url: gwUrl,
      pid: gw.child.pid!,
      headers: nomadAuth,
      backend: nomad,
      query: ONE_VOLUME,
      variables: { id: await firstId(gwUrl, nomadAuth) },
      share: 1,
    },
    {
      name: 'Nomad volumes(first: 100)',
      url: gwUrl,
      pid: gw.child.pid!,
      headers: nomadAuth,
      backend: nomad,
      query: PLAIN_LIST,
      variables: {},
      share: LIST_SHARE,
    },
    {
      name: 'OpenStack volume(id)',
      url: osGwUrl,
      pid: osGw.child.pid!,
      headers: osAuth,
      backend: openstack,
      query: ONE_VOLUME,
      variables: { id: await firstId(osGwUrl, osAuth) },
      share: 1,
    },
    {
      name: 'OpenStack volumes(first: 100)',
      url: osGwUrl,
      pid: osGw.child.pid!,
      headers: osAuth,
      backend: openstack,
      query: PLAIN_LIST,
      variables: {},
      share: LIST_SHARE,
    },
  ];

  const rows: string[] = [];
  const summary: Array<{ name: string; connections: number; overhead: number; ratio: number }> = [];
  const calls: string[] = [];
  for (const s of scenarios) {
    // The gateway's calls for one query, after one that fills its caches (Keystone token
    // validation, version documents): direct REST replays exactly these.
    await gql(s.url, s.headers, s.query, s.variables);
    await s.backend.clearLog();
    await gql(s.url, s.headers, s.query, s.variables);
    const made = await s.backend.log();
    if (made.length !== 1)
      throw new Error(
        `${s.name}: the gateway made ${made.length} backend calls for one query; this benchmark compares one REST call`,
      );
    const [call] = made;
    calls.push(`| ${s.name} | \`${call!.method} ${new URL(call!.url).pathname}${new URL(call!.url).search}\` |`);
    for (const connections of [1, 50]) {
      const base = {
        connections,
        requests: Math.round(REQUESTS[connections]! * s.share),
        warmup: WARMUP[connections]!,
      };
      const gatewayJob: LoadJob = {
        ...base,
        url: s.url,
        headers: { 'content-type': 'application/json', ...s.headers },
        body: JSON.stringify({ query: s.query, variables: s.variables }),
        graphql: true,
      };
      const directJob: LoadJob = { ...base, url: call!.url, method: call!.method, headers: call!.headers };
      const gateway: Run[] = [];
      const direct: Run[] = [];
      for (let r = 0; r < rounds; r++) {
        // Alternate which side goes first, so drift in the machine's load does not favour one.
        if (r % 2 === 0) {
          gateway.push(await measure(gatewayJob, s.pid, s.backend));
          direct.push(await measure(directJob, s.pid, s.backend));
        } else {
          direct.push(await measure(directJob, s.pid, s.backend));
          gateway.push(await measure(gatewayJob, s.pid, s.backend));
        }
      }
      const m = (runs: Run[], k: keyof Run): number => median(runs.map((x) => x[k]));
      const overhead = m(gateway, 'p50') - m(direct, 'p50');
      const ratio = m(gateway, 'throughput') / m(direct, 'throughput');
      const errors = [...gateway, ...direct].reduce((n, x) => n + x.errors, 0);
      const f = (n: number): string => n.toFixed(2);
      const each = rounds > 1 ? ` (${gateway.map((x) => x.throughput.toFixed(0)).join(', ')})` : '';
      rows.push(
        `| ${s.name} | ${connections} | ${f(m(gateway, 'p50'))} | ${f(m(gateway, 'p99'))} | ${m(gateway, 'throughput').toFixed(0)}${each} | ${f(m(gateway, 'gatewayCpuMs'))} | ${f(m(direct, 'p50'))} | ${f(m(direct, 'p99'))} | ${m(direct, 'throughput').toFixed(0)} | ${f(overhead)} | ${ratio.toFixed(2)} | ${f(m(gateway, 'simCpuMs'))} / ${f(m(direct, 'simCpuMs'))} | ${f(m(gateway, 'callsPerRequest'))} / ${f(m(direct, 'callsPerRequest'))} | ${errors} |`,
      );
      summary.push({ name: s.name, connections, overhead, ratio });
      console.log(rows.at(-1));
    }
  }

  const strategy = short
    ? ''
    : await batchStrategy(
        origins.cinder! + new URL(cinderUrl!).pathname,
        origins.nova! + new URL(novaUrl!).pathname,
        osAuth,
      );

  const targets = summary.map((x) =>
    x.connections === 1
      ? `- ${x.name}, 1 connection: p50 overhead **${x.overhead.toFixed(2)} ms** (target ≤ 1 ms: ${x.overhead <= 1 ? 'met' : 'not met'})`
      : `- ${x.name}, 50 connections: gateway req/s **${(x.ratio * 100).toFixed(0)} %** of direct (target ≥ 50 %: ${x.ratio >= 0.5 ? 'met' : 'not met'})`,
  );
  for (const x of summary)
    console.log(
      `ratio: ${x.name} c=${x.connections} ${x.connections === 1 ? `p50 overhead ms = ${x.overhead.toFixed(2)}` : `gateway/direct req/s = ${x.ratio.toFixed(2)}`}`,
    );

  const md = `## Gateway vs direct REST, pinned

Generated by \`bench/run.ts\`${short ? ' (BENCH_SHORT=1: quick mode, one round, few requests)' : ''} on ${new Date().toISOString()};
${rounds} round${rounds > 1 ? 's' : ''}, medians.

${machineFacts()}

Setup: ${pinning ? `pinned with \`taskset\`: the gateway alone on CPU ${GATEWAY_CPU}; the simulator and the load generator (bench/load-child.ts, its own process) on CPU ${REST_CPU}, in the gateway runs and the direct runs alike` : 'NOT pinned (no taskset or fewer than two CPUs here): every process shares every core'}.
Simulated Nomad (100 CSI volumes, 20 claimed) and simulated OpenStack (Keystone, Cinder, Nova:
100 volumes, 60 attached) each in their own process, each with a gateway of its own, all on loopback.
Watch-fed reads are off: the gateways have no service credential, so no watcher runs and every
read goes to the backend. "Direct" replays the one backend request the gateway makes for the
query (below), with the same credential; each side's calls are counted in the simulator's request
log over every timed run ("backend calls per request", gateway / direct). Gateway and direct runs
alternate, each round starting with the other side. Latencies in ms; "gateway CPU" and "simulator
CPU" are ms of user + system time (\`/proc/<pid>/stat\`, 10 ms ticks) over the run ÷ the requests sent
in it. Requests per run for \`volume(id)\`: ${REQUESTS[1]} at 1 connection, ${REQUESTS[50]} at 50 (after ${WARMUP[1]} and ${WARMUP[50]} per connection
not counted); for the lists a fifth of those.
At 50 connections the direct side is bound by CPU ${REST_CPU ?? '(shared)'} (simulator and generator); the gateway side
adds the gateway's own core.

| scenario | connections | gateway p50 | gateway p99 | gateway req/s${rounds > 1 ? ' (each round)' : ''} | gateway CPU per request (ms) | direct p50 | direct p99 | direct req/s | overhead p50 (ms) | gateway ÷ direct req/s | simulator CPU per request, gateway / direct (ms) | backend calls per request (gateway / direct) | errors |
|---|---|---|---|---|---|---|---|---|---|---|---|---|---|
${rows.join('\n')}

Queries: \`volume(id)\` is \`${ONE_VOLUME}\`; the lists are \`${PLAIN_LIST}\`.
The backend call each makes (and direct REST replays):

| scenario | backend call |
|---|---|
${calls.join('\n')}

Targets (issue 20): p50 overhead over direct REST ≤ 1 ms at 1 connection; at 50 connections
≥ 50 % of direct REST's throughput on the same pinning.

${targets.join('\n')}
${strategy}
### Abandoned queries

Upstream connections and calls when clients hang up mid-query: [ABANDON.md](ABANDON.md)
(\`node --import tsx bench/abandon.ts\`; not regenerated by this script).
`;
  writeSection(out, 'gateway', md);
  console.log(`wrote ${out}`);
  await Promise.all([simPool, keystonePool].map((p) => p.close()));
  const children = [gw.child, sim.child, osGw.child, osSim.child];
  for (const c of children) c.kill('SIGTERM');
  await Promise.all(children.map((c) => once(c, 'exit')));
}

/**
 * OpenStack batch strategy (full mode only): p50 of fetching k objects by id as k parallel shows
 * or one list-detail of the whole project, at 1 connection, from this process (unpinned).
 */
async function batchStrategy(cinderBase: string, novaBase: string, auth: Record<string, string>): Promise<string> {
  const cinder = new URL(cinderBase);
  const nova = new URL(novaBase);
  const cinderPool = new Pool(cinder.origin, { connections: 64 });
  const novaPool = new Pool(nova.origin, { connections: 64 });
  const cinderGet = async (path: string): Promise<any> =>
    body(
      await cinderPool.request({
        method: 'GET',
        path: cinder.pathname + path,
        headers: { ...auth, 'openstack-api-version': 'volume 3.70' },
      }),
    );
  const novaGet = async (path: string): Promise<any> =>
    body(
      await novaPool.request({
        method: 'GET',
        path: nova.pathname + path,
        headers: { ...auth, 'openstack-api-version': 'compute 2.93' },
      }),
    );
  const { volumes } = (await cinderGet('/volumes/detail?limit=1000')) as { volumes: Array<{ id: string }> };
  const { servers } = (await novaGet('/servers/detail?limit=1000')) as { servers: Array<{ id: string }> };
  const rows: string[] = [];
  for (const k of [1, 2, 4, 8, 16, 32]) {
    const vIds = volumes.slice(0, k).map((v) => v.id);
    const sIds = servers.slice(0, k).map((v) => v.id);
    const o = { connections: 1, requests: 200, warmup: 5 };
    const shows = await runLoad(
      () => Promise.all(vIds.map((id) => cinderGet(`/volumes/${id}`))).then(() => undefined),
      o,
    );
    const list = await runLoad(() => cinderGet('/volumes/detail?limit=1000').then(() => undefined), o);
    const sShows = await runLoad(
      () => Promise.all(sIds.map((id) => novaGet(`/servers/${id}`))).then(() => undefined),
      o,
    );
    const sList = await runLoad(() => novaGet('/servers/detail?limit=1000').then(() => undefined), o);
    const f = (x: number): string => x.toFixed(2);
    rows.push(
      `| ${k} | ${f(shows.p50)} | ${f(list.p50)} | ${shows.p50 <= list.p50 ? 'shows' : 'list'} | ${f(sShows.p50)} | ${f(sList.p50)} | ${sShows.p50 <= sList.p50 ? 'shows' : 'list'} |`,
    );
    console.log(rows.at(-1));
  }
  await Promise.all([cinderPool.close(), novaPool.close()]);
  return `
### OpenStack batch strategy

p50 in ms of fetching k objects by id: k parallel show calls, or one list-detail call of the
whole project (100 volumes or 40 servers) and a pick, from the benchmark's own process (unpinned).
The adapter shows below \`LIST_STRATEGY_THRESHOLD\` (volumes ${LIST_STRATEGY_THRESHOLD.volumes}, servers ${LIST_STRATEGY_THRESHOLD.servers}) and lists from there
(\`adapters/openstack/backend.ts\`). Shows here are all sent at once; the adapter sends at most 16
(volumes) or 8 (servers) at a time. Simulator costs are not a real cloud's: there a show is
~20 ms of API and database work (test/fixtures/recorded) and a list-detail grows with the
project. The threshold is set below the simulator's crossing on purpose, to bound backend calls
(one list instead of up to k shows); the comment on \`LIST_STRATEGY_THRESHOLD\` says why.

| k | volume shows | volume list-detail | faster | server shows | server list-detail | faster |
|---|---|---|---|---|---|---|
${rows.join('\n')}
`;
}

main().catch((err: unknown) => {
  console.error(err);
  killStarted();
  process.exit(1);
});
