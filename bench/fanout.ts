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
import { once } from 'node:events';
import { join } from 'node:path';
import { startBaseline } from './fanout-baseline';
import {
  baselineTarget,
  closesOf,
  fmt,
  gatewayTarget,
  line,
  max,
  pct,
  ratios,
  runStep,
  sleep,
  type StepOptions,
  type StepResult,
} from './fanout-step';
import { UNCAPPED, watchedNomad } from './constants';
import { killStarted, machineFacts, start, startBuiltGateway, wsUrlOf } from './processes';
import { writeSection } from './results-file';

const short = process.env.FANOUT_SHORT === '1';
const steps = (process.env.FANOUT_STEPS ?? (short ? '200' : '10000,15000,19000')).split(',').map(Number);
const events = Number(process.env.FANOUT_EVENTS ?? (short ? 2 : 6));
const generators = Number(process.env.FANOUT_GENERATORS ?? 2);
const writers = (process.env.FANOUT_BASELINE_WRITERS ?? '1').split(',').map(Number);
const out = process.env.BENCH_OUT ?? (short ? undefined : join(__dirname, 'RESULTS.md'));
// The full mode waits out a fixed window (its CPU per frame covers it); the quick mode only until
// every subscriber has the event's frame.
const stepOptions: StepOptions = short
  ? { events, generators, deliverMs: 1500, windowMs: 0 }
  : { events, generators, deliverMs: 0, windowMs: 4000 };

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
    const r = await runStep(gatewayTarget(simUrl, [gw], n), n, stepOptions);
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
      const rb = await runStep(baselineTarget(b, r.frame), n, stepOptions);
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
"CPU µs/frame" is the server's CPU time (every thread's run time, /proc schedstat) over the events, per
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
