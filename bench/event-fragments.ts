/**
 * Benchmark: subscription fragments that need backend reads (docs/subscriptions.md, "Fields the
 * view lacks"). N graphql-ws subscribers (one load-generator process, bench/fanout-clients.ts)
 * follow one Nomad volume's claims and releases with a list-row fragment: the light one (only what
 * the watcher's view has) or the heavy one (`details { plugin { … } }` too, which an event reads
 * with the subscriber's own credential), all with one shared token or each with its own. A fresh
 * gateway per scenario (cold caches), the simulated Nomad in its own process. Per event: the backend
 * reads events made (`gateway_live_event_reads_total`) and refused past a budget, every request the
 * simulator answered with a subscriber's token (the access checks included), the executions, and
 * change to client (from the control call to each subscriber's receive).
 *
 *   node --import tsx bench/event-fragments.ts   (writes a section of bench/RESULTS.md, or of BENCH_OUT)
 *   EVENT_FRAGMENTS_SHORT=1                      quick mode: 200 subscribers, 4 changes; writes no
 *                                                file unless BENCH_OUT is set
 *   EVENT_FRAGMENTS_SUBSCRIBERS=n                subscribers per scenario (default 1000; short 200)
 *   EVENT_FRAGMENTS_EVENTS=n                     changes per scenario, a claim and a release in turn
 *                                                (default 6; short 4; made even)
 */
import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';
import { request } from 'undici';
import { encodeGlobalId } from '../adapters/contract/ids';
import { ask, forkClients, open, type Sample } from './clients';
import { BENCH_TOKEN, UNCAPPED, watchedNomad } from './constants';
import { fmt, pct, sleep } from './fanout-step';
import { killStarted, machineFacts, schedMs, start, startBuiltGateway, wsUrlOf } from './processes';
import { writeSection } from './results-file';

const short = process.env.EVENT_FRAGMENTS_SHORT === '1';
const n = Number(process.env.EVENT_FRAGMENTS_SUBSCRIBERS ?? (short ? 200 : 1000));
const events = 2 * Math.max(1, Math.round(Number(process.env.EVENT_FRAGMENTS_EVENTS ?? (short ? 4 : 6)) / 2));
const out = process.env.BENCH_OUT ?? (short ? undefined : join(__dirname, 'RESULTS.md'));

/** The volume every subscriber follows (bench data: not claimed at the start). */
const VOLUME = 'bench-002';
const SHARED_TOKEN = 'event-fragments-shared';
const tokens = Array.from({ length: n }, (_, i) => `event-fragments-${String(i).padStart(5, '0')}`);

const LIGHT_ROW = `id name status
  attachments { state consumer { ... on VolumeAllocationConsumer { allocationId jobId clientStatus } } }
  details { ... on NomadVolumeDetails { pluginId currentWriters } }`;
const HEAVY_ROW = `${LIGHT_ROW}
  details { ... on NomadVolumeDetails { plugin { id provider version controllers { healthy expected } } } }`;
const subscription = (row: string): string => {
  const id = encodeGlobalId({ kind: 'Volume', backend: 'bench', scope: 'default', nativeId: VOLUME });
  return `subscription { volumeChanged(filter: { volumeIds: ["${id}"], types: [CLAIMED, RELEASED] }) {
    type cursor observedAt volume { ...Row } } }
  fragment Row on Volume { ${row} }`;
};

interface Scenario {
  name: string;
  heavy: boolean;
  distinct: boolean;
}
const SCENARIOS: Scenario[] = [
  { name: 'light, one token', heavy: false, distinct: false },
  { name: 'heavy, one token', heavy: true, distinct: false },
  { name: `light, ${n} tokens`, heavy: false, distinct: true },
  { name: `heavy, ${n} tokens`, heavy: true, distinct: true },
];

/** What one change cost and how it arrived. */
interface EventResult {
  reads: number;
  refused: number;
  accessChecks: number;
  executions: number;
  /** Requests the simulator answered with a subscriber's token (access checks and reads). */
  subscriberRequests: number;
  latencies: number[];
  delivered: number;
  withErrors: number;
  gatewayCpuMs: number;
}

async function post(url: string, body: unknown, method: 'POST' | 'DELETE' = 'POST'): Promise<string> {
  const res = await request(url, {
    method,
    headers: { 'content-type': 'application/json' },
    body: method === 'POST' ? JSON.stringify(body) : undefined,
  });
  const text = await res.body.text();
  if (res.statusCode >= 300) throw new Error(`${url}: HTTP ${res.statusCode} ${text.slice(0, 200)}`);
  return text;
}

/** The sum of a metric's samples whose name and labels start with `prefix`. */
function metric(text: string, prefix: string): number {
  return text
    .split('\n')
    .filter((l) => l.startsWith(prefix))
    .reduce((s, l) => s + Number(l.slice(l.lastIndexOf(' ') + 1)), 0);
}

async function counters(
  metricsUrl: string,
): Promise<Omit<EventResult, 'subscriberRequests' | 'latencies' | 'delivered' | 'withErrors' | 'gatewayCpuMs'>> {
  const text = await (await request(metricsUrl)).body.text();
  return {
    reads: metric(text, 'gateway_live_event_reads_total'),
    refused: metric(text, 'gateway_live_event_read_refusals_total'),
    accessChecks: metric(text, 'gateway_live_access_checks_total'),
    executions: metric(text, 'gateway_live_executions_total{field="volumeChanged"}'),
  };
}

let claims = 0;

/** Claims the volume (even `e`) or releases the last claim (odd `e`). */
function change(simUrl: string, e: number): Promise<string> {
  if (e % 2 === 0) claims++;
  return e % 2 === 0
    ? post(`${simUrl}/_sim/allocations`, {
        id: `ef-${claims}`,
        jobId: `ef-${claims}`,
        nodeId: 'node-bench-1',
        volumes: [{ volumeId: VOLUME, mode: 'write', accessMode: 'single-node-writer', attachmentMode: 'file-system' }],
      })
    : post(`${simUrl}/_sim/allocations/ef-${claims}/status`, { clientStatus: 'complete', desiredStatus: 'stop' });
}

async function untilDelivered(kid: ChildProcess, live: number, ms: number): Promise<void> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if ((await ask<{ frames: number }>(kid, { count: true })).frames >= live) return;
    await sleep(5);
  }
}

async function run(s: Scenario, simUrl: string): Promise<{ opened: number; events: EventResult[] }> {
  const gw = await startBuiltGateway(
    { ...watchedNomad(simUrl), HOST: '127.0.0.1', PORT: '0', LOG_LEVEL: 'warn', ...UNCAPPED },
    /ready at (\S+)/,
  );
  const readyUrl = new URL(gw.match[1]!);
  const metricsUrl = `${readyUrl.origin}/metrics`;
  const kid = forkClients();
  try {
    await sleep(1000);
    const init = (s.distinct ? tokens : [SHARED_TOKEN]).map((t) => ({ 'X-Nomad-Token': t }));
    const query = subscription(s.heavy ? HEAVY_ROW : LIGHT_ROW);
    const opened = await open(kid, {
      url: wsUrlOf(gw.match[1]!),
      count: n,
      sources: ['127.0.0.1'],
      init,
      batch: 100,
      query,
    });
    if (opened.failed > 0) console.error(`${s.name}: ${opened.failed} subscriptions failed`);
    const results: EventResult[] = [];
    for (let e = 0; e < events; e++) {
      const before = await counters(metricsUrl);
      await post(`${simUrl}/_sim/requests`, undefined, 'DELETE');
      const cpu0 = schedMs(gw.child.pid!).runMs;
      const t0 = Date.now();
      await change(simUrl, e);
      await untilDelivered(kid, opened.opened, 20_000);
      const gatewayCpuMs = schedMs(gw.child.pid!).runMs - cpu0;
      const { samples } = await ask<{ samples: Sample[] }>(kid, { report: true });
      const after = await counters(metricsUrl);
      const logged = JSON.parse(await (await request(`${simUrl}/_sim/requests`)).body.text()) as Array<{
        token?: string;
      }>;
      const mine = samples.filter((x) => x.type === (e % 2 === 0 ? 'CLAIMED' : 'RELEASED'));
      results.push({
        reads: after.reads - before.reads,
        refused: after.refused - before.refused,
        accessChecks: after.accessChecks - before.accessChecks,
        executions: after.executions - before.executions,
        subscriberRequests: logged.filter((r) => r.token !== undefined && r.token !== BENCH_TOKEN).length,
        latencies: mine.map((x) => x.at - t0),
        delivered: mine.length,
        withErrors: mine.filter((x) => (x.errors ?? 0) > 0).length,
        gatewayCpuMs,
      });
      await sleep(300);
    }
    return { opened: opened.opened, events: results };
  } finally {
    kid.send({ close: true });
    gw.child.kill('SIGTERM');
    await once(gw.child, 'exit');
  }
}

const mean = (xs: number[]): number => (xs.length === 0 ? NaN : xs.reduce((a, b) => a + b, 0) / xs.length);
const firstAndLater = (rs: EventResult[], f: (r: EventResult) => number): string =>
  `${f(rs[0]!)} / ${fmt(mean(rs.slice(1).map(f)))}`;

async function main(): Promise<void> {
  const sim = await start(['bench/sim-server.ts'], {}, /SIM_URL=(\S+)/);
  const simUrl = sim.match[1]!;
  for (const secret of [SHARED_TOKEN, ...tokens])
    await post(`${simUrl}/_sim/tokens`, { secret, namespaces: { default: 'read' } });
  const rows: string[] = [];
  const perChange: string[] = [];
  const p99: Record<string, { later: number; all: number }> = {};
  for (const s of SCENARIOS) {
    const r = await run(s, simUrl);
    const all = r.events.flatMap((e) => e.latencies);
    const later = r.events.slice(1).flatMap((e) => e.latencies);
    p99[s.name] = { later: pct(later, 99), all: pct(all, 99) };
    const delivered = r.events.reduce((a, e) => a + e.delivered, 0);
    const withErrors = r.events.reduce((a, e) => a + e.withErrors, 0);
    rows.push(
      `| ${s.name} | ${r.opened} | ${firstAndLater(r.events, (e) => e.executions)} | ${firstAndLater(r.events, (e) => e.reads)} | ${firstAndLater(r.events, (e) => e.refused)} | ${firstAndLater(r.events, (e) => e.accessChecks)} | ${firstAndLater(r.events, (e) => e.subscriberRequests)} | ${delivered} / ${r.opened * events} | ${withErrors} | ${fmt(pct(r.events[0]!.latencies, 50))} / ${fmt(pct(r.events[0]!.latencies, 99))} | ${fmt(pct(later, 50))} / ${fmt(pct(later, 99))} | ${fmt(mean(r.events.map((e) => e.gatewayCpuMs)))} |`,
    );
    console.log(rows.at(-1));
    const each = (f: (e: EventResult) => string): string => r.events.map(f).join(', ');
    perChange.push(
      `| ${s.name} | ${each((e) => String(e.reads))} | ${each((e) => String(e.refused))} | ${each((e) => fmt(pct(e.latencies, 99)))} |`,
    );
  }
  for (const who of ['one token', `${n} tokens`]) {
    const heavy = p99[`heavy, ${who}`]!;
    const light = p99[`light, ${who}`]!;
    console.log(
      `ratio: event fragments, heavy ÷ light change→client p99 (later events / all), ${who} = ${(heavy.later / light.later).toFixed(2)} / ${(heavy.all / light.all).toFixed(2)}`,
    );
  }
  const md = `## Event fragments: reads in subscription events

Generated by \`bench/event-fragments.ts\`${short ? ' (EVENT_FRAGMENTS_SHORT=1)' : ''} on ${new Date().toISOString()}.

${machineFacts()}

Setup: simulated Nomad (bench data) in one process; for each scenario a fresh gateway in another
(default settings: \`LIVE_EVENT_READS_PER_CREDENTIAL\` 20, \`LIVE_EVENT_READS_PER_EVENT\` 500, plugin
cache 10 s per credential), watching it through the event stream; one load-generator process
holding ${n} graphql-ws subscriptions over loopback, all on this machine's cores. Every subscriber
follows one volume's \`CLAIMED\` and \`RELEASED\` with a list-row fragment: light (name, status,
attachments with their allocation, the plugin's id) or heavy (the same and \`details { plugin { id
provider version controllers } }\`, a Nomad plugin read the watcher's view lacks). One token shared by
all, or one token each (each may read the namespace). ${events} changes per scenario, a claim and a
release in turn, each awaited until every subscriber had it.

Each "first / later" cell is the first change's figure, then the mean over the later ones: the
first meets cold caches (access grants, the per-credential plugin cache). "backend reads" are what
events read for fields the view lacks (\`gateway_live_event_reads_total\`); "refused" those past a
budget (the field is \`NOT_SERVED_IN_EVENTS\`, \`gateway_live_event_read_refusals_total\`); "access
checks" the subscribers' grants checked with Nomad (cached 30 s); "subscriber requests" every
request the simulator answered with a subscriber's token. Change to client is from the control call
to each subscriber's receive, in ms; "with errors" counts results that carried an error. Compare
figures within this run only.

| scenario | subscribed | executions, first / later | backend reads, first / later | refused, first / later | access checks, first / later | subscriber requests, first / later | delivered | with errors | change→client p50 / p99, first change | later changes p50 / p99 | gateway CPU ms per change |
|---|---|---|---|---|---|---|---|---|---|---|---|
${rows.join('\n')}

Change by change (claims and releases in turn):

| scenario | backend reads | refused | change→client p99 |
|---|---|---|---|
${perChange.join('\n')}
`;
  if (out) {
    writeSection(out, 'event-fragments', md);
    console.log(`wrote ${out}`);
  }
  sim.child.kill('SIGTERM');
  await once(sim.child, 'exit');
}

main().catch((err: unknown) => {
  console.error(err);
  killStarted();
  process.exit(1);
});
