/**
 * Benchmark: subscription fan-out. One gateway process watches a simulated Nomad (its own process)
 * through the event stream; load-generator processes (bench/fanout-clients.ts) hold N graphql-ws
 * subscriptions to one volume's claims; the simulator's control API claims and releases the volume,
 * and every subscriber's receive time is compared with the event's `observedAt` (fan-out latency)
 * and with the moment the claim was made (change to client). Gateway RSS before and after the
 * subscriptions gives the memory per subscription. Then it steps the connection count up until
 * the process stops keeping up or a limit refuses, and reports the ceiling.
 *
 *   node --import tsx bench/fanout.ts      (part of `npm run bench`; writes a section of bench/RESULTS.md)
 *   FANOUT_STEPS=10000,15000,19000         connection counts (default; FANOUT_SHORT=1: 200)
 *   FANOUT_EVENTS=6                        changes per step
 *   FANOUT_GENERATORS=2                    load-generator processes
 *   FANOUT_PROFILE=dir                     write a CPU profile of each step's gateway there
 */
import { once } from 'node:events';
import { join } from 'node:path';
import { request } from 'undici';
import { ask, claimsSubscription, forkClients, open, type Sample } from './clients';
import { BENCH_TOKEN, UNCAPPED, watchedNomad } from './constants';
import { killStarted, machineFacts, rssKiB, start, startBuiltGateway, wsUrlOf } from './processes';
import { writeSection } from './results-file';

const short = process.env.FANOUT_SHORT === '1';
const steps = (process.env.FANOUT_STEPS ?? (short ? '200' : '10000,15000,19000')).split(',').map(Number);
const events = Number(process.env.FANOUT_EVENTS ?? (short ? 2 : 6));
const generators = Number(process.env.FANOUT_GENERATORS ?? 2);
const out = process.env.BENCH_OUT ?? join(__dirname, 'RESULTS.md');
const VOLUME = 'bench-001';

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
const pct = (xs: number[], p: number): number => (xs.length === 0 ? NaN : [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))]!);
const max = (xs: number[]): number => xs.reduce((m, x) => (x > m ? x : m), -Infinity);
const fmt = (n: number): string => (Number.isFinite(n) ? n.toFixed(1) : '–');

async function control(simUrl: string, path: string, body: unknown): Promise<any> {
  const res = await request(`${simUrl}/_sim/${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
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
}

async function runStep(simUrl: string, wsUrl: string, gatewayPid: number, n: number): Promise<StepResult> {
  const query = claimsSubscription(VOLUME);
  const rssBefore = rssKiB(gatewayPid);
  const kids = Array.from({ length: generators }, forkClients);
  // Source addresses: each carries its own ephemeral-port range (about 28,000 ports on Linux).
  const sources = Array.from({ length: Math.max(1, Math.ceil(n / 20_000)) + 1 }, (_, i) => `127.0.0.${i + 1}`);
  const per = Math.ceil(n / generators);
  const opened = await Promise.all(kids.map((k, i) => open(k, { url: wsUrl, count: Math.min(per, n - i * per), sources, init: [{ 'X-Nomad-Token': BENCH_TOKEN }], batch: 200, query })));
  await sleep(1000);
  const rssAfter = rssKiB(gatewayPid);
  const live = opened.reduce((s, o) => s + o.opened, 0);
  const fanout: number[] = [];
  const endToEnd: number[] = [];
  let delivered = 0;
  let expected = 0;
  for (let e = 0; e < events; e++) {
    const t0 = Date.now();
    if (e % 2 === 0) await control(simUrl, 'allocations', { id: `fanout-${n}-${e}`, jobId: `fanout-${n}-${e}`, nodeId: 'node-bench-1', volumes: [{ volumeId: VOLUME, mode: 'write', accessMode: 'single-node-writer', attachmentMode: 'file-system' }] });
    else await control(simUrl, `allocations/fanout-${n}-${e - 1}/status`, { clientStatus: 'complete', desiredStatus: 'stop' });
    await sleep(short ? 1500 : 4000);
    const reports = await Promise.all(kids.map((k) => ask<{ samples: Sample[] }>(k, { report: true })));
    // Every subscriber is owed each distinct CLAIMED/RELEASED cursor any of them saw (a claim is
    // one CLAIMED; its release is DETACHING while Nomad frees it, then one RELEASED).
    const cursors = new Set<string>();
    for (const { samples } of reports) {
      for (const s of samples) {
        if (s.type !== 'CLAIMED' && s.type !== 'RELEASED') continue;
        cursors.add(s.cursor);
        delivered++;
        fanout.push(s.at - Date.parse(s.observedAt));
        endToEnd.push(s.at - t0);
      }
    }
    expected += live * cursors.size;
  }
  for (const k of kids) k.send({ close: true });
  await Promise.all(kids.map((k) => once(k, 'exit')));
  const closes: Record<string, number> = {};
  for (const o of opened) for (const [c, v] of Object.entries(o.closes)) closes[c] = (closes[c] ?? 0) + v;
  return { connections: n, opened: live, failed: opened.reduce((s, o) => s + o.failed, 0), closes, rssPerSubKiB: live ? (rssAfter - rssBefore) / live : NaN, fanout, endToEnd, delivered, expected };
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
    // A V8 CPU profile of each step's gateway, written when it exits.
    process.env.FANOUT_PROFILE ? ['--cpu-prof', `--cpu-prof-dir=${process.env.FANOUT_PROFILE}`] : [],
  );
  await sleep(1000);
  return {
    pid: gw.child.pid!,
    ws: wsUrlOf(gw.match[1]!),
    stop: async () => {
      gw.child.kill('SIGTERM');
      await once(gw.child, 'exit');
    },
  };
}

async function main(): Promise<void> {
  const sim = await start(['bench/sim-server.ts'], {}, /SIM_URL=(\S+)/);
  const simUrl = sim.match[1]!;
  const results: StepResult[] = [];
  for (const n of steps) {
    const gw = await gateway(simUrl);
    const r = await runStep(simUrl, gw.ws, gw.pid, n);
    await gw.stop();
    results.push(r);
    console.log(`${n}: opened ${r.opened}, failed ${r.failed}, fan-out p50 ${fmt(pct(r.fanout, 50))} p99 ${fmt(pct(r.fanout, 99))} max ${fmt(max(r.fanout))} ms, ${fmt(r.rssPerSubKiB)} KiB/sub, delivered ${r.delivered}/${r.expected}, closes ${JSON.stringify(r.closes)}`);
  }
  const rows = results.map(
    (r) =>
      `| ${r.connections} | ${r.opened} | ${r.failed} | ${fmt(pct(r.fanout, 50))} | ${fmt(pct(r.fanout, 99))} | ${fmt(max(r.fanout))} | ${fmt(pct(r.endToEnd, 50))} | ${fmt(pct(r.endToEnd, 99))} | ${r.delivered} / ${r.expected} | ${fmt(r.rssPerSubKiB)} | ${Object.entries(r.closes).map(([c, v]) => `${c}×${v}`).join(' ') || 'none'} |`,
  );
  const md = `## Subscription fan-out

Generated by \`bench/fanout.ts\`${short ? ' (FANOUT_SHORT=1)' : ''} on ${new Date().toISOString()}.

${machineFacts()}

Setup: simulated Nomad (bench data) in one process; the gateway in another, watching it through
the event stream with its service token; ${generators} load-generator processes holding the
subscriptions over loopback (several source addresses), all on this machine's cores. Every
subscriber follows \`volumeChanged\` of one volume; the simulator's control API claims and releases
it ${events} times per step. Fan-out latency is from the event's \`observedAt\` (the watcher saw the
change) to the subscriber's receive; change-to-client is from the control call to the receive.
Milliseconds. RSS per subscription is the gateway's RSS growth over the subscriptions opened.

| connections asked | subscribed | refused/failed | fan-out p50 | fan-out p99 | fan-out max | change→client p50 | change→client p99 | delivered | RSS KiB/sub | closes |
|---|---|---|---|---|---|---|---|---|---|---|
${rows.join('\n')}
`;
  writeSection(out, 'fanout', md);
  console.log(`wrote ${out}`);
  sim.child.kill('SIGTERM');
  await once(sim.child, 'exit');
}

main().catch((err: unknown) => {
  console.error(err);
  killStarted();
  process.exit(1);
});
