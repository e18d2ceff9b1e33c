/**
 * One fan-out step, shared by bench/fanout.ts (one process against the plain-`ws` baseline) and
 * bench/fanout-replicas.ts (replicas on Redis against one process): fresh load generators
 * (bench/fanout-clients.ts) open N subscriptions to one volume's claims, spread over the target's
 * URLs, the target makes its events, and every subscriber's receive time is compared with the
 * event's `observedAt` (fan-out) and with the moment the change was made (change to client).
 * CPU time (every thread's run time, /proc schedstat) and the time runnable but waiting for a
 * CPU are read for the target's processes, the generators and any other process named, over each
 * event's window and over its delivery (until every subscriber has its frame).
 */
import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { request } from 'undici';
import { ask, claimsSubscription, forkClients, open, type Sample } from './clients';
import { BENCH_TOKEN } from './constants';
import { baselinePayload, type Baseline } from './fanout-baseline';
import { otherProcessesRunMs, rssKiB, schedMs, stealMs } from './processes';

/** The volume every fan-out subscriber follows (bench data). */
export const VOLUME = 'bench-001';

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
export const pct = (xs: number[], p: number): number =>
  xs.length === 0 ? NaN : [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))]!;
export const max = (xs: number[]): number => xs.reduce((m, x) => (x > m ? x : m), -Infinity);
export const fmt = (n: number): string => (Number.isFinite(n) ? n.toFixed(1) : '–');
export const sum = (pids: number[], f: (pid: number) => number): number => pids.reduce((s, p) => s + f(p), 0);

async function control(simUrl: string, path: string, body: unknown): Promise<unknown> {
  const res = await request(`${simUrl}/_sim/${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return res.body.json();
}

/** A server the clients subscribe to: the gateway (one process or replicas), or the syscall-only baseline. */
export interface Target {
  /** Its processes (RSS and CPU are summed over them). */
  pids: number[];
  /** Its processes' names in the CPU figures, as `pids`. @default `server <i>` */
  names?: string[];
  /** Its graphql-ws URLs: the subscribers are spread evenly over them, each sample tagged with its URL's index. */
  ws: string[];
  /** Makes event `e` happen. */
  event(e: number): Promise<void>;
  /** Write-loop figures the target measured itself, per event (the baseline's). */
  loops?: Array<{ sockets: number; loopMs: number }>;
}

/** How a step runs. */
export interface StepOptions {
  /** Changes made (each a claim or a release of the volume). */
  events: number;
  /** Load-generator processes. */
  generators: number;
  /**
   * Each event first waits until every subscriber has a frame, at most this long (ms), and the
   * CPU over that wait is the delivery's. 0: no such wait (nor the generators' polling it takes).
   */
  deliverMs: number;
  /** Then until this long after the change (ms): the window the CPU per frame covers. 0: none. */
  windowMs: number;
  /** More processes whose CPU is reported, by name (e.g. Redis, the simulator). @default none */
  processes?: Record<string, number[]>;
}

/** CPU time one process (or group) used over a step's events, in ms ({@link schedMs}). */
export interface CpuUse {
  name: string;
  /** Over the events' whole windows. */
  windowMs: number;
  /** Over the deliveries only (from each change until every subscriber had it); 0 without `deliverMs`. */
  deliveryMs: number;
  /** Time runnable but waiting for a CPU over the deliveries (0 without `deliverMs`). */
  deliveryWaitMs: number;
}

/** What the subscribers that reached one of the target's URLs received. */
export interface TagResult {
  fanout: number[];
  endToEnd: number[];
  /** Per event, the earliest fan-out among them (ms): how soon that server started delivering. */
  first: number[];
  delivered: number;
}

/** What one step measured. */
export interface StepResult {
  connections: number;
  opened: number;
  failed: number;
  closes: Record<string, number>;
  rssPerSubKiB: number;
  fanout: number[];
  endToEnd: number[];
  /** The samples by the index of the URL their subscriber reached (`first`: per event, its earliest fan-out). */
  byTag: Map<number, TagResult>;
  delivered: number;
  expected: number;
  /** The server processes' CPU ({@link cpuRunMs}) over the events, per frame delivered, in µs. */
  cpuPerFrameUs: number;
  /** Per process: the target's (by name), each other process named, and the load generators. */
  cpu: CpuUse[];
  /** Per event, from the change until the last subscriber had its frame (ms). */
  spans: number[];
  /** Run time of the machine's other processes over the deliveries ({@link otherProcessesRunMs}); 0 without `deliverMs`. */
  othersDeliveryMs: number;
  /** The hypervisor's steal time over the deliveries ({@link stealMs}); 0 without `deliverMs`. */
  stealDeliveryMs: number;
  /** Wall time the deliveries' CPU figures cover (each from the change until the wait for delivery ended). */
  deliveryWallMs: number;
  /** Per event, the earliest fan-out (ms): when the server's first frame arrived. */
  firsts: number[];
  /** The text of one CLAIMED frame a client received. */
  frame?: string;
  /** Fan-out p99 of each event on its own (one slow event, e.g. during a keepalive round, sets the pooled p99). */
  perEventP99: number[];
  /** The baseline's own write loop per socket, in µs (mean over the events); none for the gateway. */
  loopPerSocketUs?: number;
}

export async function runStep(t: Target, n: number, o: StepOptions): Promise<StepResult> {
  const query = claimsSubscription(VOLUME);
  const rssBefore = sum(t.pids, rssKiB);
  const kids = Array.from({ length: o.generators }, forkClients);
  // Source addresses: each carries its own ephemeral-port range (about 28,000 ports on Linux).
  const sources = Array.from({ length: Math.max(1, Math.ceil(n / 20_000)) + 1 }, (_, i) => `127.0.0.${i + 1}`);
  // Connection c goes to URL c mod the URL count; each generator opens its share URL by URL.
  const share = (c0: number, count: number, u: number): number =>
    Array.from({ length: count }, (_, k) => c0 + k).filter((c) => c % t.ws.length === u).length;
  const per = Math.ceil(n / o.generators);
  const opened = await Promise.all(
    kids.map(async (k, i) => {
      const c0 = i * per;
      const count = Math.max(0, Math.min(per, n - c0));
      const got = { opened: 0, failed: 0, closes: {} as Record<string, number> };
      for (let u = 0; u < t.ws.length; u++) {
        const r = await open(k, {
          url: t.ws[u]!,
          count: share(c0, count, u),
          sources,
          init: [{ 'X-Nomad-Token': BENCH_TOKEN }],
          batch: 200,
          query,
          tag: u,
        });
        got.opened += r.opened;
        got.failed += r.failed;
        got.closes = r.closes; // cumulative in the generator
      }
      return got;
    }),
  );
  await sleep(1000);
  const rssAfter = sum(t.pids, rssKiB);
  const live = opened.reduce((s, x) => s + x.opened, 0);
  const fanout: number[] = [];
  const endToEnd: number[] = [];
  const byTag = new Map<number, TagResult>();
  const spans: number[] = [];
  const firsts: number[] = [];
  let delivered = 0;
  let expected = 0;
  let frame: string | undefined;
  const groups: Array<[string, number[]]> = [
    ...t.pids.map((p, i): [string, number[]] => [t.names?.[i] ?? `server ${i}`, [p]]),
    ...Object.entries(o.processes ?? {}),
    ['load generators', kids.map((k) => k.pid!)],
  ];
  const cpu: CpuUse[] = groups.map(([name]) => ({ name, windowMs: 0, deliveryMs: 0, deliveryWaitMs: 0 }));
  const schedNow = (): Array<{ runMs: number; waitMs: number }> =>
    groups.map(([, pids]) =>
      pids.map(schedMs).reduce((a, x) => ({ runMs: a.runMs + x.runMs, waitMs: a.waitMs + x.waitMs }), {
        runMs: 0,
        waitMs: 0,
      }),
    );
  const cpuNow = (): number[] => schedNow().map((x) => x.runMs);
  let serverCpu = 0;
  const perEventP99: number[] = [];
  let othersDeliveryMs = 0;
  let stealDeliveryMs = 0;
  // Everything measured here, and this process (it polls the generators meanwhile).
  const measured = new Set([process.pid, ...groups.flatMap(([, pids]) => pids)]);
  let deliveryWallMs = 0;
  for (let e = 0; e < o.events; e++) {
    const o0 = o.deliverMs > 0 ? otherProcessesRunMs(measured) : new Map<number, number>();
    const steal0 = stealMs();
    const s0 = schedNow();
    const c0 = s0.map((x) => x.runMs);
    const t0 = Date.now();
    await t.event(e);
    if (o.deliverMs > 0) {
      await untilDelivered(kids, live, o.deliverMs);
      for (const [pid, ms] of otherProcessesRunMs(measured)) othersDeliveryMs += ms - (o0.get(pid) ?? 0);
      stealDeliveryMs += stealMs() - steal0;
      deliveryWallMs += Date.now() - t0;
      schedNow().forEach((x, i) => {
        cpu[i]!.deliveryMs += x.runMs - s0[i]!.runMs;
        cpu[i]!.deliveryWaitMs += x.waitMs - s0[i]!.waitMs;
      });
    }
    const rest = t0 + o.windowMs - Date.now();
    if (rest > 0) await sleep(rest);
    const c1 = cpuNow();
    c1.forEach((c, i) => (cpu[i]!.windowMs += c - c0[i]!));
    serverCpu += c1.slice(0, t.pids.length).reduce((s, c, i) => s + c - c0[i]!, 0);
    const reports = await Promise.all(kids.map((k) => ask<{ samples: Sample[]; frame?: string }>(k, { report: true })));
    // Every subscriber is owed each distinct CLAIMED/RELEASED cursor any of them saw (a claim is
    // one CLAIMED; its release is DETACHING while Nomad frees it, then one RELEASED).
    const cursors = new Set<string>();
    const mark = fanout.length;
    let last = t0;
    const first = new Map<number, number>();
    for (const { samples, frame: f } of reports) {
      frame ??= f;
      for (const s of samples) {
        if (s.type !== 'CLAIMED' && s.type !== 'RELEASED') continue;
        cursors.add(s.cursor);
        delivered++;
        const d = s.at - Date.parse(s.observedAt);
        fanout.push(d);
        endToEnd.push(s.at - t0);
        last = Math.max(last, s.at);
        const tag = s.tag ?? 0;
        let g = byTag.get(tag);
        if (!g) byTag.set(tag, (g = { fanout: [], endToEnd: [], first: [], delivered: 0 }));
        first.set(tag, Math.min(first.get(tag) ?? Infinity, d));
        g.fanout.push(d);
        g.endToEnd.push(s.at - t0);
        g.delivered++;
      }
    }
    for (const [tag, d] of first) byTag.get(tag)!.first.push(d);
    expected += live * cursors.size;
    spans.push(last - t0);
    firsts.push(Math.min(...first.values()));
    perEventP99.push(pct(fanout.slice(mark), 99));
  }
  for (const k of kids) k.send({ close: true });
  await Promise.all(kids.map((k) => once(k, 'exit')));
  const closes: Record<string, number> = {};
  for (const x of opened) for (const [c, v] of Object.entries(x.closes)) closes[c] = (closes[c] ?? 0) + v;
  const loops = t.loops ?? [];
  const loopSockets = loops.reduce((s, l) => s + l.sockets, 0);
  return {
    connections: n,
    opened: live,
    failed: opened.reduce((s, x) => s + x.failed, 0),
    closes,
    rssPerSubKiB: live ? (rssAfter - rssBefore) / live : NaN,
    fanout,
    endToEnd,
    byTag,
    delivered,
    expected,
    cpuPerFrameUs: delivered ? (serverCpu * 1000) / delivered : NaN,
    cpu,
    spans,
    othersDeliveryMs,
    stealDeliveryMs,
    deliveryWallMs,
    firsts,
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

/** The gateway (one process or replicas) as a fan-out target: the simulator's control API claims and releases the volume. */
export function gatewayTarget(
  simUrl: string,
  gws: Array<{ pid: number; ws: string; name?: string }>,
  n: number,
  label = `fanout-${n}`,
): Target {
  return {
    pids: gws.map((g) => g.pid),
    names: gws.map((g, i) => g.name ?? `gateway ${i}`),
    ws: gws.map((g) => g.ws),
    async event(e) {
      if (e % 2 === 0)
        await control(simUrl, 'allocations', {
          id: `${label}-${e}`,
          jobId: `${label}-${e}`,
          nodeId: 'node-bench-1',
          volumes: [
            { volumeId: VOLUME, mode: 'write', accessMode: 'single-node-writer', attachmentMode: 'file-system' },
          ],
        });
      else
        await control(simUrl, `allocations/${label}-${e - 1}/status`, {
          clientStatus: 'complete',
          desiredStatus: 'stop',
        });
    },
  };
}

/** The baseline as a fan-out target: every event is the gateway's claim frame, written again. */
export function baselineTarget(b: Baseline, frame: string): Target {
  const loops: Array<{ sockets: number; loopMs: number }> = [];
  return {
    pids: b.pids,
    names: b.pids.map((_, i) =>
      b.pids.length === 1 ? 'baseline' : i === 0 ? 'baseline relay' : `baseline writer ${i}`,
    ),
    ws: [b.ws],
    loops,
    async event(e) {
      loops.push(await b.event(baselinePayload(frame, e)));
    },
  };
}

/** p50 and p99 of `a`'s fan-out over `b`'s. */
export function ratios(a: StepResult, b: StepResult): { p50: number; p99: number } {
  return { p50: pct(a.fanout, 50) / pct(b.fanout, 50), p99: pct(a.fanout, 99) / pct(b.fanout, 99) };
}

export const closesOf = (r: StepResult): string =>
  Object.entries(r.closes)
    .map(([c, v]) => `${c}×${v}`)
    .join(' ') || 'none';

/** One step on the console. */
export function line(who: string, r: StepResult): string {
  const loop = r.loopPerSocketUs === undefined ? '' : `, write loop ${fmt(r.loopPerSocketUs)} µs/socket`;
  return `${r.connections} ${who}: opened ${r.opened}, failed ${r.failed}, fan-out p50 ${fmt(pct(r.fanout, 50))} p99 ${fmt(pct(r.fanout, 99))} (per event ${r.perEventP99.map(fmt).join(' ')}) max ${fmt(max(r.fanout))} ms, CPU ${fmt(r.cpuPerFrameUs)} µs/frame${loop}, ${fmt(r.rssPerSubKiB)} KiB/sub, delivered ${r.delivered}/${r.expected}, closes ${JSON.stringify(r.closes)}`;
}
