/**
 * Benchmark: subscription fan-out. One gateway process watches a simulated Nomad (its own process)
 * through the event stream; load-generator processes (bench/fanout-clients.ts) hold N graphql-ws
 * subscriptions to one volume's claims; the simulator's control API claims and releases the volume,
 * and every subscriber's receive time is compared with the event's `observedAt` (fan-out latency)
 * and with the moment the claim was made (change to client). Gateway RSS before and after the
 * subscriptions gives the memory per subscription. Then it steps the connection count up until
 * the process stops keeping up or a limit refuses, and reports the ceiling.
 *
 * Each step then runs the syscall-only baseline (bench/fanout-baseline-server.ts, a plain `ws`
 * server) on fresh load generators with the same count, writing the gateway's own claim frame:
 * the gateway ÷ baseline ratio is what the gateway's code costs over the sockets themselves.
 *
 *   node --import tsx bench/fanout.ts      (writes a section of bench/RESULTS.md, or of BENCH_OUT)
 *   FANOUT_SHORT=1                         quick mode (seconds): 200 connections, 2 changes (each
 *                                          awaited until delivered, not over a 4 s window), prints
 *                                          the ratios and writes no file unless BENCH_OUT is set
 *   FANOUT_STEPS=10000,15000,19000         connection counts (default; FANOUT_SHORT=1: 200)
 *   FANOUT_EVENTS=6                        changes per step (FANOUT_SHORT=1: 2)
 *   FANOUT_GENERATORS=2                    load-generator processes
 *   FANOUT_BASELINE_WRITERS=1              baselines to run, by writer processes (e.g. 1,2: the
 *                                          second spreads the sockets over 2 processes)
 *   FANOUT_PROFILE=dir                     write a CPU profile of each step's gateway and baseline there
 */
import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';
import { readFileSync } from 'node:fs';
import { request } from 'undici';
import { ask, claimsSubscription, forkClients, open, type Sample } from './clients';
import { baselinePayload, startBaseline, type Baseline } from './fanout-baseline';
import { BENCH_TOKEN, UNCAPPED, watchedNomad } from './constants';
import { killStarted, machineFacts, rssKiB, start, startBuiltGateway, wsUrlOf } from './processes';
import { writeSection } from './results-file';

const short = process.env.FANOUT_SHORT === '1';
const steps = (process.env.FANOUT_STEPS ?? (short ? '200' : '10000,15000,19000')).split(',').map(Number);
const events = Number(process.env.FANOUT_EVENTS ?? (short ? 2 : 6));
const generators = Number(process.env.FANOUT_GENERATORS ?? 2);
const writers = (process.env.FANOUT_BASELINE_WRITERS ?? '1').split(',').map(Number);
const out = process.env.BENCH_OUT ?? (short ? undefined : join(__dirname, 'RESULTS.md'));
const VOLUME = 'bench-001';

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
const pct = (xs: number[], p: number): number =>
  xs.length === 0 ? NaN : [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))]!;
const max = (xs: number[]): number => xs.reduce((m, x) => (x > m ? x : m), -Infinity);
const fmt = (n: number): string => (Number.isFinite(n) ? n.toFixed(1) : '–');

async function control(simUrl: string, path: string, body: unknown): Promise<any> {
  const res = await request(`${simUrl}/_sim/${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return res.body.json();
}

interface StepResult {
  connections: number;
  opened: number;
  failed: number;
  closes: Record<string, number>;
  rssPerSubKiB: number;
  fanout: number[];
  endToEnd: number[];
  delivered: number;
  expected: number;
  /** The server process's CPU (user + system, from /proc) over the events, per frame delivered, in µs. */
  cpuPerFrameUs: number;
  /** The text of one CLAIMED frame a client received. */
  frame?: string;
  /** Fan-out p99 of each event on its own (one slow event, e.g. during a keepalive round, sets the pooled p99). */
  perEventP99: number[];
  /** The baseline's own write loop per socket, in µs (mean over the events); none for the gateway. */
  loopPerSocketUs?: number;
}

/** A server the clients subscribe to: the gateway, or the syscall-only baseline. */
interface Target {
  /** Its processes (RSS and CPU are summed over them). */
  pids: number[];
  ws: string;
  /** Makes event `e` happen. */
  event(e: number): Promise<void>;
  /** Write-loop figures the target measured itself, per event (the baseline's). */
  loops?: Array<{ sockets: number; loopMs: number }>;
}

async function runStep(t: Target, n: number): Promise<StepResult> {
  const query = claimsSubscription(VOLUME);
  const rssBefore = sum(t.pids, rssKiB);
  const kids = Array.from({ length: generators }, forkClients);
  // Source addresses: each carries its own ephemeral-port range (about 28,000 ports on Linux).
  const sources = Array.from({ length: Math.max(1, Math.ceil(n / 20_000)) + 1 }, (_, i) => `127.0.0.${i + 1}`);
  const per = Math.ceil(n / generators);
  const opened = await Promise.all(
    kids.map((k, i) =>
      open(k, {
        url: t.ws,
        count: Math.min(per, n - i * per),
        sources,
        init: [{ 'X-Nomad-Token': BENCH_TOKEN }],
        batch: 200,
        query,
      }),
    ),
  );
  await sleep(1000);
  const rssAfter = sum(t.pids, rssKiB);
  const live = opened.reduce((s, o) => s + o.opened, 0);
  const fanout: number[] = [];
  const endToEnd: number[] = [];
  let delivered = 0;
  let expected = 0;
  let frame: string | undefined;
  let cpu = 0;
  const perEventP99: number[] = [];
  for (let e = 0; e < events; e++) {
    const cpu0 = sum(t.pids, cpuMs);
    const t0 = Date.now();
    await t.event(e);
    // The full mode waits out a fixed window (its CPU per frame covers it); the quick mode only
    // until every subscriber has the event's frame.
    if (short) await untilDelivered(kids, live, 1500);
    else await sleep(4000);
    cpu += sum(t.pids, cpuMs) - cpu0;
    const reports = await Promise.all(kids.map((k) => ask<{ samples: Sample[]; frame?: string }>(k, { report: true })));
    // Every subscriber is owed each distinct CLAIMED/RELEASED cursor any of them saw (a claim is
    // one CLAIMED; its release is DETACHING while Nomad frees it, then one RELEASED).
    const cursors = new Set<string>();
    const mark = fanout.length;
    for (const { samples, frame: f } of reports) {
      frame ??= f;
      for (const s of samples) {
        if (s.type !== 'CLAIMED' && s.type !== 'RELEASED') continue;
        cursors.add(s.cursor);
        delivered++;
        fanout.push(s.at - Date.parse(s.observedAt));
        endToEnd.push(s.at - t0);
      }
    }
    expected += live * cursors.size;
    perEventP99.push(pct(fanout.slice(mark), 99));
  }
  for (const k of kids) k.send({ close: true });
  await Promise.all(kids.map((k) => once(k, 'exit')));
  const closes: Record<string, number> = {};
  for (const o of opened) for (const [c, v] of Object.entries(o.closes)) closes[c] = (closes[c] ?? 0) + v;
  const loops = t.loops ?? [];
  const loopSockets = loops.reduce((s, l) => s + l.sockets, 0);
  return {
    connections: n,
    opened: live,
    failed: opened.reduce((s, o) => s + o.failed, 0),
    closes,
    rssPerSubKiB: live ? (rssAfter - rssBefore) / live : NaN,
    fanout,
    endToEnd,
    delivered,
    expected,
    cpuPerFrameUs: delivered ? (cpu * 1000) / delivered : NaN,
    frame,
    perEventP99,
    loopPerSocketUs: loopSockets ? (loops.reduce((s, l) => s + l.loopMs, 0) * 1000) / loopSockets : undefined,
  };
}

/** Until the generators hold `frames` frames not yet reported, or `ms` have passed. */
async function untilDelivered(kids: ChildProcess[], frames: number, ms: number): Promise<void> {
  const end = Date.now() + ms;
  for (;;) {
    const counts = await Promise.all(kids.map((k) => ask<{ frames: number }>(k, { count: true })));
    if (counts.reduce((n, c) => n + c.frames, 0) >= frames || Date.now() >= end) return;
    await sleep(20);
  }
}

/** The gateway as a fan-out target: the simulator's control API claims and releases the volume. */
function gatewayTarget(simUrl: string, gw: { pid: number; ws: string }, n: number): Target {
  return {
    pids: [gw.pid],
    ws: gw.ws,
    async event(e) {
      if (e % 2 === 0)
        await control(simUrl, 'allocations', {
          id: `fanout-${n}-${e}`,
          jobId: `fanout-${n}-${e}`,
          nodeId: 'node-bench-1',
          volumes: [
            { volumeId: VOLUME, mode: 'write', accessMode: 'single-node-writer', attachmentMode: 'file-system' },
          ],
        });
      else
        await control(simUrl, `allocations/fanout-${n}-${e - 1}/status`, {
          clientStatus: 'complete',
          desiredStatus: 'stop',
        });
    },
  };
}

/** The baseline as a fan-out target: every event is the gateway's claim frame, written again. */
function baselineTarget(b: Baseline, frame: string): Target {
  const loops: Array<{ sockets: number; loopMs: number }> = [];
  return {
    pids: b.pids,
    ws: b.ws,
    loops,
    async event(e) {
      loops.push(await b.event(baselinePayload(frame, e)));
    },
  };
}

const sum = (pids: number[], f: (pid: number) => number): number => pids.reduce((s, p) => s + f(p), 0);

/** A process's CPU time so far (user + system), in ms (clock ticks of 10 ms). */
function cpuMs(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  // utime and stime are fields 14 and 15 of stat(5); fields[0] here is field 3.
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

/** A V8 CPU profile of each step's server, written when it exits, in a directory per server and step (dir/gateway-<time>/). */
function profileArgs(who: string): string[] {
  const dir = process.env.FANOUT_PROFILE;
  return dir ? ['--cpu-prof', `--cpu-prof-dir=${join(dir, `${who}-${Date.now()}`)}`] : [];
}

/** A gateway of its own per step, so each step's RSS starts from the same idle process. */
async function gateway(simUrl: string): Promise<{ pid: number; ws: string; stop: () => Promise<void> }> {
  const gw = await startBuiltGateway(
    {
      ...watchedNomad(simUrl),
      HOST: '0.0.0.0',
      PORT: '0',
      LOG_LEVEL: 'warn',
      // Every subscriber shares one address range and one credential.
      ...UNCAPPED,
    },
    /ready at (\S+)/,
    profileArgs('gateway'),
  );
  let stopping = false;
  gw.child.once('exit', (code, signal) => {
    if (!stopping) console.error(`the gateway exited during the step (code ${code}, signal ${signal})`);
  });
  await sleep(1000);
  return {
    pid: gw.child.pid!,
    ws: wsUrlOf(gw.match[1]!),
    stop: async () => {
      stopping = true;
      gw.child.kill('SIGTERM');
      await once(gw.child, 'exit');
    },
  };
}

/** p50 and p99 of the gateway over the baseline's (the quick mode's regression guard). */
function ratios(gw: StepResult, base: StepResult): { p50: number; p99: number } {
  return { p50: pct(gw.fanout, 50) / pct(base.fanout, 50), p99: pct(gw.fanout, 99) / pct(base.fanout, 99) };
}

function line(who: string, r: StepResult): string {
  const loop = r.loopPerSocketUs === undefined ? '' : `, write loop ${fmt(r.loopPerSocketUs)} µs/socket`;
  return `${r.connections} ${who}: opened ${r.opened}, failed ${r.failed}, fan-out p50 ${fmt(pct(r.fanout, 50))} p99 ${fmt(pct(r.fanout, 99))} (per event ${r.perEventP99.map(fmt).join(' ')}) max ${fmt(max(r.fanout))} ms, CPU ${fmt(r.cpuPerFrameUs)} µs/frame${loop}, ${fmt(r.rssPerSubKiB)} KiB/sub, delivered ${r.delivered}/${r.expected}, closes ${JSON.stringify(r.closes)}`;
}

const closesOf = (r: StepResult): string =>
  Object.entries(r.closes)
    .map(([c, v]) => `${c}×${v}`)
    .join(' ') || 'none';

/** The gateway's row (the first table's columns, unchanged from earlier runs, then its CPU). */
function gatewayRow(r: StepResult): string {
  return `| ${r.connections} | ${r.opened} | ${r.failed} | ${fmt(pct(r.fanout, 50))} | ${fmt(pct(r.fanout, 99))} | ${fmt(max(r.fanout))} | ${fmt(pct(r.endToEnd, 50))} | ${fmt(pct(r.endToEnd, 99))} | ${r.delivered} / ${r.expected} | ${fmt(r.rssPerSubKiB)} | ${closesOf(r)} | ${fmt(r.cpuPerFrameUs)} |`;
}

/** A row of the comparison with the baseline, `gw` the same step's gateway. */
function compareRow(who: string, r: StepResult, gw: StepResult): string {
  const q = ratios(gw, r);
  return `| ${who} | ${r.connections} | ${r.opened} | ${fmt(pct(r.fanout, 50))} | ${fmt(pct(r.fanout, 99))} | ${fmt(max(r.fanout))} | ${r.delivered} / ${r.expected} | ${fmt(r.cpuPerFrameUs)} | ${r.loopPerSocketUs === undefined ? '–' : fmt(r.loopPerSocketUs)} | ${fmt(r.rssPerSubKiB)} | ${closesOf(r)} | ${r === gw ? '–' : `${q.p50.toFixed(2)} / ${q.p99.toFixed(2)}`} |`;
}

async function main(): Promise<void> {
  const sim = await start(['bench/sim-server.ts'], {}, /SIM_URL=(\S+)/);
  const simUrl = sim.match[1]!;
  const rows: string[] = [];
  const compared: string[] = [];
  for (const n of steps) {
    const gw = await gateway(simUrl);
    const r = await runStep(gatewayTarget(simUrl, gw, n), n);
    await gw.stop();
    console.log(line('gateway', r));
    rows.push(gatewayRow(r));
    compared.push(compareRow(`gateway`, r, r));
    if (!r.frame) {
      console.log(`${n}: no claim frame received from the gateway, so no baseline`);
      continue;
    }
    // The same clients, the same count, the same frame bytes, right after: only the server differs.
    for (const w of writers) {
      const who = w === 1 ? 'baseline' : `baseline×${w}`;
      const b = await startBaseline(w, profileArgs(who));
      const rb = await runStep(baselineTarget(b, r.frame), n);
      await b.stop();
      console.log(line(who, rb));
      compared.push(compareRow(w === 1 ? 'baseline (plain ws)' : `baseline (plain ws, ${w} writer processes)`, rb, r));
      const q = ratios(r, rb);
      console.log(`${n}: fan-out gateway ÷ ${who}: p50 ${q.p50.toFixed(2)}×, p99 ${q.p99.toFixed(2)}×`);
      console.log(`ratio: fan-out at ${n}, gateway ÷ ${who} p50 / p99 = ${q.p50.toFixed(2)} / ${q.p99.toFixed(2)}`);
    }
  }
  const md = `## Subscription fan-out

Generated by \`bench/fanout.ts\`${short ? ' (FANOUT_SHORT=1)' : ''} on ${new Date().toISOString()}.

${machineFacts()}

Setup: simulated Nomad (bench data) in one process; the gateway in another, watching it through
the event stream with its service token; ${generators} load-generator processes holding the
subscriptions over loopback (several source addresses), all on this machine's cores. Every
subscriber follows \`volumeChanged\` of one volume; the simulator's control API claims and releases
it ${events} times per step. Fan-out latency is from the event's \`observedAt\` (the watcher saw the
change) to the subscriber's receive; change-to-client is from the control call to the receive.
Milliseconds. RSS per subscription is the server's RSS growth over the subscriptions opened.
"CPU µs/frame" is the server's CPU time (user + system, /proc, 10 ms ticks) over the events, per
frame delivered: the gateway's includes its watcher, its executions and its keepalive pings.

| connections asked | subscribed | refused/failed | fan-out p50 | fan-out p99 | fan-out max | change→client p50 | change→client p99 | delivered | RSS KiB/sub | closes | CPU µs/frame |
|---|---|---|---|---|---|---|---|---|---|---|---|
${rows.join('\n')}

**Against the syscall-only baseline.** \`bench/fanout-baseline-server.ts\` is a plain \`ws\`
server with no gateway code, run right after the gateway on fresh load generators with the same
count: it writes the bytes of the gateway's own claim frame (its cursor made distinct per event,
\`observedAt\` stamped when it starts writing) with one \`ws.send\` per socket in one loop, and
times that loop itself ("write loop", µs per socket). With n writer processes the sockets are
spread over them (node:cluster). The last column is the gateway's fan-out p50 / p99 over this row's.

| server | connections | subscribed | fan-out p50 | fan-out p99 | fan-out max | delivered | CPU µs/frame | write loop µs/socket | RSS KiB/sub | closes | gateway ÷ this, p50 / p99 |
|---|---|---|---|---|---|---|---|---|---|---|---|
${compared.join('\n')}
`;
  if (out) {
    writeSection(out, 'fanout', md);
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
