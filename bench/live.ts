/**
 * Benchmark: the live path's latency and backend load (a section of bench/RESULTS.md).
 *
 * 1. Change to client, Nomad: the simulator's control API claims or releases a volume; one
 *    graphql-ws subscriber times the event's arrival (the watcher follows the event stream).
 * 2. Change to client, OpenStack at the fast interval: a volume kept in `creating` holds the
 *    watcher at its fast interval; each sample seeds a volume and times the CREATED event.
 * 3. Backend requests per minute with 1, 100 and 10,000 subscribers sharing 3 credentials, while
 *    the volume is claimed and released: from the simulator's request log, and the gateway's
 *    access checks from /metrics.
 * 4. Nomad `volumes(first: 100) { attachments }`: backend calls and p50 without a watcher (one read
 *    per volume) and with one (watch-fed reads: the list plus one read per namespace).
 *
 *   node --import tsx bench/live.ts        (BENCH_LIVE_SHORT=1: fewer samples, 1 and 100 subscribers,
 *                                          and 2 beside 1, 3 and 4 instead of after them)
 *   BENCH_LIVE_SAMPLES=n                   changes timed in parts 1 and 2 each (default 30, short 5)
 *   BENCH_LIVE_WINDOW_MS=n                 each backend-load window (default 30000, short 10000; npm run bench: 2000)
 *   BENCH_LIVE_CHANGE_MS=n                 a claim or a release every n ms in those windows (default 2500;
 *                                          npm run bench: 1000, so its window holds one claim and release)
 */
import { once } from 'node:events';
import { join } from 'node:path';
import { createClient, type Client } from 'graphql-ws';
import { request } from 'undici';
import WebSocket from 'ws';
import { encodeGlobalId } from '../adapters/contract/ids';
import { forkClients, open } from './clients';
import { BENCH_TOKEN, OPENSTACK_SIM_READY, UNCAPPED, watchedNomad } from './constants';
import { killStarted, machineFacts, start, startBuiltGateway, wsUrlOf } from './processes';
import { writeSection } from './results-file';

const short = process.env.BENCH_LIVE_SHORT === '1';
const out = process.env.BENCH_OUT ?? join(__dirname, 'RESULTS.md');
const samples = Number(process.env.BENCH_LIVE_SAMPLES ?? (short ? 5 : 30));
/** Time between the claims and releases of the backend-load windows, ms. */
const changeMs = Number(process.env.BENCH_LIVE_CHANGE_MS ?? 2500);
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
const pct = (xs: number[], p: number): number =>
  xs.length === 0 ? NaN : [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))]!;
const fmt = (n: number): string => (Number.isFinite(n) ? n.toFixed(1) : '–');

async function post(url: string, body: unknown, headers: Record<string, string> = {}): Promise<any> {
  const res = await request(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
  const text = await res.body.text();
  if (res.statusCode >= 300) throw new Error(`${url}: HTTP ${res.statusCode} ${text.slice(0, 200)}`);
  return text ? JSON.parse(text) : null;
}

async function get(url: string): Promise<string> {
  const res = await request(url);
  return res.body.text();
}

/** Starts a gateway on one backend; answers its HTTP and WebSocket URLs. */
async function gateway(
  env: Record<string, string>,
): Promise<{ http: string; ws: string; metrics: string; stop: () => Promise<void> }> {
  const gw = await startBuiltGateway(
    { HOST: '127.0.0.1', PORT: '0', LOG_LEVEL: 'warn', ...UNCAPPED, ...env },
    /ready at (\S+)/,
  );
  const u = new URL(gw.match[1]!);
  return {
    http: u.href,
    ws: wsUrlOf(u.href),
    metrics: `${u.origin}/metrics`,
    stop: async () => {
      gw.child.kill('SIGTERM');
      await once(gw.child, 'exit');
    },
  };
}

/** Subscribes one graphql-ws client; resolves each event with its receive time. */
function subscriber(
  wsUrl: string,
  init: Record<string, string>,
  query: string,
): { client: Client; events: Array<{ at: number; type: string }>; ready: Promise<void> } {
  const client = createClient({ url: wsUrl, webSocketImpl: WebSocket, connectionParams: init, retryAttempts: 0 });
  const events: Array<{ at: number; type: string }> = [];
  let ready!: () => void;
  const readyP = new Promise<void>((r) => (ready = r));
  client.subscribe<{ volumeChanged: { type: string } }>(
    { query },
    {
      next: (m) => {
        const type = m.data?.volumeChanged.type ?? 'error';
        if (type === 'SUBSCRIBED') ready();
        else events.push({ at: Date.now(), type });
      },
      error: (e) => console.error('subscription error', e),
      complete: () => undefined,
    },
  );
  return { client, events, ready: readyP };
}

async function waitFor(
  events: Array<{ at: number; type: string }>,
  type: string,
  from: number,
  ms = 10_000,
): Promise<number> {
  const end = Date.now() + ms;
  for (;;) {
    const e = events.find((x) => x.type === type && x.at >= from);
    if (e) return e.at - from;
    if (Date.now() > end) return NaN;
    await sleep(2);
  }
}

async function nomadLatency(simUrl: string, gw: { ws: string }): Promise<number[]> {
  const volumeId = encodeGlobalId({ kind: 'Volume', backend: 'bench', scope: 'default', nativeId: 'bench-002' });
  const s = subscriber(
    gw.ws,
    { 'X-Nomad-Token': BENCH_TOKEN },
    `subscription { volumeChanged(filter: { volumeIds: ["${volumeId}"], types: [CLAIMED, RELEASED] }) { type cursor } }`,
  );
  await s.ready;
  const out: number[] = [];
  for (let i = 0; i < samples; i++) {
    const t0 = Date.now();
    if (i % 2 === 0)
      await post(`${simUrl}/_sim/allocations`, {
        id: `lat-${i}`,
        jobId: `lat-${i}`,
        nodeId: 'node-bench-1',
        volumes: [
          { volumeId: 'bench-002', mode: 'write', accessMode: 'single-node-writer', attachmentMode: 'file-system' },
        ],
      });
    else
      await post(`${simUrl}/_sim/allocations/lat-${i - 1}/status`, { clientStatus: 'complete', desiredStatus: 'stop' });
    out.push(await waitFor(s.events, i % 2 === 0 ? 'CLAIMED' : 'RELEASED', t0));
    await sleep(100);
  }
  await s.client.dispose();
  return out;
}

async function openstackLatency(
  keystoneUrl: string,
  cinderUrl: string,
  project: string,
  token: string,
  gw: { ws: string },
): Promise<number[]> {
  const control = keystoneUrl.replace(/\/v3\/?$/, '');
  // A volume that stays `creating` keeps the watcher at its fast interval, as a pending operation would.
  await post(`${control}/_sim/delays`, { createMs: 3_600_000 });
  await post(`${cinderUrl}/volumes`, { volume: { size: 1, name: 'keeps-watcher-fast' } }, { 'x-auth-token': token });
  const s = subscriber(
    gw.ws,
    { 'X-Auth-Token': token },
    'subscription { volumeChanged(filter: { types: [CREATED] }) { type cursor } }',
  );
  await s.ready;
  await sleep(1500);
  const out: number[] = [];
  for (let i = 0; i < samples; i++) {
    const t0 = Date.now();
    await post(`${control}/_sim/volumes`, { project, name: `seeded-${i}`, size: 1 });
    out.push(await waitFor(s.events, 'CREATED', t0));
    await sleep(200 + Math.round(Math.random() * 300));
  }
  await s.client.dispose();
  return out;
}

async function backendLoad(
  simUrl: string,
  gw: { ws: string; metrics: string },
  subscribers: number,
): Promise<{ requests: number; perMinute: number; accessChecks: number }> {
  const tokens = ['bench-sub-a', 'bench-sub-b', 'bench-sub-c'];
  for (const t of tokens) await post(`${simUrl}/_sim/tokens`, { secret: t, namespaces: { default: 'read' } });
  const volumeId = encodeGlobalId({ kind: 'Volume', backend: 'bench', scope: 'default', nativeId: 'bench-003' });
  const query = `subscription { volumeChanged(filter: { volumeIds: ["${volumeId}"] }) { type cursor observedAt } }`;
  const checksBefore = accessChecks(await get(gw.metrics));
  const kids = Array.from({ length: subscribers >= 1000 ? 2 : 1 }, forkClients);
  const per = Math.ceil(subscribers / kids.length);
  await Promise.all(
    kids.map((k, i) =>
      open(k, {
        url: gw.ws,
        count: Math.min(per, subscribers - i * per),
        sources: ['127.0.0.1', '127.0.0.2'],
        init: tokens.map((t) => ({ 'X-Nomad-Token': t })),
        batch: 200,
        query,
      }),
    ),
  );
  await request(`${simUrl}/_sim/requests`, { method: 'DELETE' }).then((r) => r.body.text());
  const windowMs = Number(process.env.BENCH_LIVE_WINDOW_MS ?? (short ? 10_000 : 30_000));
  const t0 = Date.now();
  for (let i = 0; Date.now() - t0 < windowMs; i++) {
    if (i % 2 === 0)
      await post(`${simUrl}/_sim/allocations`, {
        id: `load-${subscribers}-${i}`,
        jobId: `load-${i}`,
        nodeId: 'node-bench-1',
        volumes: [
          { volumeId: 'bench-003', mode: 'write', accessMode: 'single-node-writer', attachmentMode: 'file-system' },
        ],
      });
    else
      await post(`${simUrl}/_sim/allocations/load-${subscribers}-${i - 1}/status`, {
        clientStatus: 'complete',
        desiredStatus: 'stop',
      });
    await sleep(changeMs);
  }
  const elapsed = Date.now() - t0;
  const requests = (JSON.parse(await get(`${simUrl}/_sim/requests`)) as unknown[]).length;
  const checks = accessChecks(await get(gw.metrics)) - checksBefore;
  for (const k of kids) k.send({ close: true });
  await Promise.all(kids.map((k) => once(k, 'exit')));
  return { requests, perMinute: (requests / elapsed) * 60_000, accessChecks: checks };
}

/** Access checks sent to backends so far (gateway_live_access_checks_total, all labels). */
function accessChecks(metrics: string): number {
  return metrics
    .split('\n')
    .filter((l) => l.startsWith('gateway_live_access_checks_total{'))
    .reduce((s, l) => s + Number(l.split(' ').at(-1)), 0);
}

async function listCost(simUrl: string, gwHttp: string): Promise<{ calls: number; p50: number }> {
  const query = '{ volumes(first: 100) { nodes { id attachments { id state } } } }';
  const run = (): Promise<any> => post(gwHttp, { query }, { 'x-nomad-token': BENCH_TOKEN });
  await run();
  // The fewest of three lists: the watcher's own reads and the readiness probes (the same token
  // here) may fall into one list's window on a loaded machine, and are not what a list costs.
  let calls = Infinity;
  for (let i = 0; i < 3; i++) {
    await request(`${simUrl}/_sim/requests`, { method: 'DELETE' }).then((r) => r.body.text());
    const first = await run();
    if (first.errors) throw new Error(JSON.stringify(first.errors));
    const seen = (JSON.parse(await get(`${simUrl}/_sim/requests`)) as Array<{ path: string }>).filter(
      (r) => !r.path.startsWith('/v1/event'),
    ).length;
    calls = Math.min(calls, seen);
  }
  const times: number[] = [];
  for (let i = 0; i < (short ? 10 : 200); i++) {
    const t = performance.now();
    await run();
    times.push(performance.now() - t);
  }
  return { calls, p50: pct(times, 50) };
}

/** What parts 1, 3 and 4 measured. */
interface NomadFigures {
  /** Change to client, ms, per sample. */
  nomad: number[];
  loads: Array<{ n: number; r: Awaited<ReturnType<typeof backendLoad>> }>;
  withWatch: Awaited<ReturnType<typeof listCost>>;
  withoutWatch: Awaited<ReturnType<typeof listCost>>;
}

/** Parts 1, 3 and 4: Nomad, watched and then not. */
async function nomadPart(simUrl: string): Promise<NomadFigures> {
  const watched = await gateway(watchedNomad(simUrl));
  const nomad = await nomadLatency(simUrl, watched);
  console.log(`nomad change→client p50 ${fmt(pct(nomad, 50))} ms`);
  const loads: NomadFigures['loads'] = [];
  for (const n of short ? [1, 100] : [1, 100, 10_000]) {
    loads.push({ n, r: await backendLoad(simUrl, watched, n) });
    console.log(`${n} subscribers: ${loads.at(-1)!.r.perMinute.toFixed(0)} backend requests/min`);
  }
  const withWatch = await listCost(simUrl, watched.http);
  await watched.stop();
  const unwatched = await gateway({ GATEWAY_BACKENDS: `bench=nomad@${simUrl}` });
  const withoutWatch = await listCost(simUrl, unwatched.http);
  await unwatched.stop();
  return { nomad, loads, withWatch, withoutWatch };
}

/** Part 2: OpenStack, on its own simulator and gateway. */
async function openstackPart(osSim: RegExpExecArray): Promise<number[]> {
  const [, keystoneUrl, cinderUrl, , project, osToken] = osSim as unknown as string[];
  const osGw = await gateway({
    GATEWAY_BACKENDS: `os=openstack@${keystoneUrl}`,
    GATEWAY_BACKEND_OS_USERNAME: 'bench',
    GATEWAY_BACKEND_OS_PASSWORD: 'bench-secret',
    GATEWAY_BACKEND_OS_PROJECT_NAME: 'bench',
  });
  const os = await openstackLatency(keystoneUrl!, cinderUrl!, project!, osToken!, osGw);
  console.log(`openstack change→client p95 ${fmt(pct(os, 95))} ms`);
  await osGw.stop();
  return os;
}

async function main(): Promise<void> {
  const [sim, osSim] = await Promise.all([
    start(['bench/sim-server.ts'], {}, /SIM_URL=(\S+)/),
    start(['bench/openstack-sim-server.ts'], {}, OPENSTACK_SIM_READY),
  ]);
  const simUrl = sim.match[1]!;
  // The parts share no simulator or gateway, so no request log. The full run takes them one after
  // the other, each latency with the machine to itself; the short one side by side (npm run bench
  // runs it next to other benchmarks anyway).
  const [{ nomad, loads, withWatch, withoutWatch }, os] = short
    ? await Promise.all([nomadPart(simUrl), openstackPart(osSim.match)])
    : [await nomadPart(simUrl), await openstackPart(osSim.match)];

  const md = `## Live path: change to client, backend load, watch-fed reads

Generated by \`bench/live.ts\`${short ? ' (BENCH_LIVE_SHORT=1)' : ''} on ${new Date().toISOString()}.

${machineFacts()}

Simulators (bench data) and gateways each in their own process; this script is the client.

| change to client | samples | p50 ms | p95 ms | max ms | target | not received in 10 s |
|---|---|---|---|---|---|---|
| Nomad claim/release (event stream) | ${nomad.length} | ${fmt(pct(nomad, 50))} | ${fmt(pct(nomad, 95))} | ${fmt(Math.max(...nomad))} | p50 ≤ 50 | ${nomad.filter(Number.isNaN).length} |
| OpenStack new volume, watcher at its fast interval (default 500 ms) | ${os.length} | ${fmt(pct(os, 50))} | ${fmt(pct(os, 95))} | ${fmt(Math.max(...os))} | p95 ≤ 1000 | ${os.filter(Number.isNaN).length} |

Backend requests while one volume is claimed and released every ${changeMs / 1000} s, subscribers spread over 3
credentials (a read-only token each), all following that volume. "Backend requests" are those
the simulator logged during the window (the watcher's event stream and reads, access checks);
"access checks" are the subscribers' own calls that proved their token at start and their
namespace, from opening the subscribers to the end of the window (each cached 30 s per
credential, and per scope: at most two per credential).

| subscribers | backend requests | per minute | of which access checks |
|---|---|---|---|
${loads.map(({ n, r }) => `| ${n} | ${r.requests} | ${r.perMinute.toFixed(0)} | ${r.accessChecks} |`).join('\n')}

Nomad \`volumes(first: 100) { nodes { id attachments { id state } } }\` (100 volumes in one namespace, 20 claimed):

| gateway | backend calls per query (fewest of 3) | p50 ms |
|---|---|---|
| no watcher (no service token): one read per volume | ${withoutWatch.calls} | ${fmt(withoutWatch.p50)} |
| watcher: the list plus one read proving the namespace, details from the watcher | ${withWatch.calls} | ${fmt(withWatch.p50)} |
`;
  writeSection(out, 'live', md);
  console.log(`wrote ${out}`);
  for (const c of [sim.child, osSim.child]) c.kill('SIGTERM');
  await Promise.all([sim.child, osSim.child].map((c) => once(c, 'exit')));
}

main().catch((err: unknown) => {
  console.error(err);
  killStarted();
  process.exit(1);
});
