/**
 * The benchmark runner. `npm run bench` runs every benchmark's quick mode (seconds each, about a
 * minute in all on two cores, into a scratch directory: bench/RESULTS.md is left alone) and prints
 * one table of ratios and figures; `npm run bench:full` runs the full modes, which write
 * bench/RESULTS.md. A regression guard, not a timed test: nothing here judges a figure.
 *
 *   node --import tsx bench/quick.ts           quick modes
 *   node --import tsx bench/quick.ts --full    full modes
 *   node --import tsx bench/quick.ts --check   check modes (what `npm test` runs, test/bench.test.ts)
 *   QUICK_DIR=dir                              keep each quick or check run's results (<name>.md), output
 *                                              (<name>.out) and the outcomes (summary.json) there
 *   BENCH_ONLY=run,heap                        only these benchmarks
 *
 * The gateway is compiled once first (bench/processes.ts, skipped when current). The quick modes
 * that measure no CPU-sensitive ratio (heap, live, soak: bytes, backend calls, functional checks)
 * run side by side after the others; the others each have the machine to themselves. Full modes
 * all run one at a time.
 *
 * A check mode is a benchmark's quick mode at the smallest sizes and shortest waits that still run
 * every step of it and every functional check it carries ({@link Bench.check}): it proves the script
 * still runs end to end and its figures are well formed, and measures nothing worth reading, so
 * every check mode runs side by side. Their cost is mostly the processes each benchmark starts (a
 * dozen gateways, ten simulators, load generators): about 30 s of CPU against the quick modes' 34
 * on two cores, and about 60 % of their wall time (all side by side, no waits for the machine alone).
 *
 * A benchmark whose script is not in this checkout is listed as skipped. Any benchmark may print
 * lines `ratio: <label> = <value> …` on stdout; they go into the table as they are.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ensureGatewayBuild, root } from './processes';

/** One benchmark as the runner knows it. */
export interface Bench {
  /** Its name in the table and in QUICK_DIR's files. */
  name: string;
  /** Script, relative to the checkout. */
  script: string;
  /** Environment of its quick mode. */
  quick: Record<string, string>;
  /**
   * Environment of its check mode, over its quick mode's: the smallest sizes and shortest waits
   * that still run every step and functional check of the quick mode (no figure is read as a
   * measurement). Empty: the quick mode's own sizes are already the smallest that check works with.
   */
  check: Record<string, string>;
  /** Whether `--full` runs it (a long run with a command of its own, e.g. `npm run soak`, is quick only). @default true */
  full?: boolean;
  /**
   * Whether its quick mode may share the machine (a check mode always does): it measures no
   * CPU-sensitive ratio (its figures are counts, bytes or functional checks), so it runs side by
   * side with the next benchmarks marked so; its latencies then include their load. @default false
   */
  shares?: boolean;
  /** Figures worth a row, read from its quick run's results file (beyond its `ratio:` lines). */
  figures?(md: string): Array<[label: string, value: string]>;
}

/** Cells of a results table's rows whose first cell matches `first`. */
export const rowsOf = (md: string, first: RegExp): string[][] =>
  md
    .split('\n')
    .filter((l) => l.startsWith('| ') && first.test(l.split('|')[1]!.trim()))
    .map((l) =>
      l
        .split('|')
        .slice(1, -1)
        .map((c) => c.trim()),
    );

/** The benchmarks, in the order they run. A script not here yet is skipped, not an error. */
export const BENCHES: Bench[] = [
  // 40 requests per run still give the gateway's CPU per request a few 10 ms ticks (the table's
  // figure, checked above 0).
  { name: 'run', script: 'bench/run.ts', quick: { BENCH_SHORT: '1' }, check: { BENCH_REQUESTS: '40' } },
  {
    name: 'cpu-per-request',
    script: 'bench/cpu-per-request.ts',
    quick: { CPU_SHORT: '1' },
    check: { CPU_REQUESTS: '20' },
  },
  { name: 'inmemory', script: 'bench/inmemory.ts', quick: { INMEM_SHORT: '1' }, check: { INMEM_REQUESTS: '10' } },
  {
    name: 'fanout',
    script: 'bench/fanout.ts',
    quick: { FANOUT_SHORT: '1' },
    check: { FANOUT_STEPS: '20', FANOUT_GENERATORS: '1' },
    figures: (md) =>
      rowsOf(md, /^\d+$/).flatMap((r): Array<[string, string]> => [
        [`${r[0]} subscribers: fan-out p50 / p99 ms`, `${r[3]} / ${r[4]}`],
        [`${r[0]} subscribers: delivered`, r[8]!],
      ]),
  },
  {
    name: 'fanout-replicas',
    script: 'bench/fanout-replicas.ts',
    quick: { FANOUT_REPLICAS_SHORT: '1' },
    // No baseline (the fanout check runs its code); a short lease TTL, so that the new Redis
    // grants the first lease soon.
    check: {
      FANOUT_REPLICAS_SUBSCRIBERS: '20',
      FANOUT_REPLICAS_GENERATORS: '1',
      FANOUT_REPLICAS_BASELINE_WRITERS: '',
      FANOUT_REPLICAS_LEASE_TTL_MS: '1500',
    },
    figures: (md) =>
      rowsOf(md.split('**The two replicas apart**')[0]!, /^(one process|2 replicas)/).map((r): [string, string] => [
        `${r[0]}: change→client p50 / p99 ms`,
        `${r[6]} / ${r[7]}`,
      ]),
  },
  {
    name: 'event-fragments',
    script: 'bench/event-fragments.ts',
    quick: { EVENT_FRAGMENTS_SHORT: '1' },
    // Under the per-event read cap (500), so every read of the distinct tokens is made and counted.
    check: { EVENT_FRAGMENTS_SUBSCRIBERS: '10', EVENT_FRAGMENTS_EVENTS: '2' },
    figures: (md) =>
      rowsOf(md.split('Change by change')[0]!, /^heavy, /).map((r): [string, string] => [
        `${r[0]}: backend reads per change, first / later`,
        r[3]!,
      ]),
  },
  // A full doctor pass's CPU over 10,000 volumes per backend (timed: the machine to itself), and
  // the extra backend calls per pass counted on the simulators. Its check: a small view, 2 passes.
  {
    name: 'doctor',
    script: 'bench/doctor.ts',
    quick: { DOCTOR_SHORT: '1' },
    check: { DOCTOR_VOLUMES: '500', DOCTOR_PASSES: '2', DOCTOR_SERVERS: '20' },
  },
  // Its figure is bytes surviving each scavenge, which load does not change: it runs beside the next ones.
  // Its check keeps the quick sizes: the counted lists must cause scavenges (one per 25 or so),
  // and they cost well under a second.
  { name: 'gc', script: 'bench/gc.ts', shares: true, quick: { GC_SHORT: '1' }, check: {} },
  {
    name: 'replicas',
    script: 'bench/replicas.ts',
    // Backend requests are counted, not timed; the failover sample waits out a lease TTL.
    shares: true,
    quick: { REPLICAS_SHORT: '1' },
    check: {
      REPLICAS_WINDOW_MS: '1000',
      REPLICAS_SUBSCRIBERS: '1',
      REPLICAS_FAILOVERS: '1',
      REPLICAS_TAKEOVER_VOLUMES: '20',
      REPLICAS_LEASE_TTL_MS: '1500',
    },
  },
  {
    name: 'sentinel-failover',
    script: 'bench/sentinel-failover.ts',
    // Its figures are Sentinel's and the gateways' timeouts, not CPU-bound work.
    shares: true,
    quick: { SENTINEL_SHORT: '1' },
    check: { SENTINEL_PHASE_MS: '500' },
    figures: (md) => {
      const m = /Worst failover to the next delivered event: (\d+) ms; events lost (\d+), duplicated (\d+)/.exec(md);
      return m ? [['Sentinel failover to the next event ms (lost / duplicated)', `${m[1]} (${m[2]} / ${m[3]})`]] : [];
    },
  },
  {
    name: 'heap',
    script: 'bench/heap.ts',
    shares: true,
    quick: { HEAP_SHORT: '1' },
    // The wait before the second snapshot is the gateway's connection_init timeout and a half second.
    check: { HEAP_SUBSCRIPTIONS: '20', HEAP_INIT_TIMEOUT_MS: '2000' },
    figures: (md) => {
      const m = /\*\*JS heap per subscription: ([\d.]+) KiB\.\*\*/.exec(md);
      return m ? [['JS heap per subscription, KiB', m[1]!]] : [];
    },
  },
  {
    name: 'live',
    script: 'bench/live.ts',
    shares: true,
    quick: { BENCH_LIVE_SHORT: '1', BENCH_LIVE_WINDOW_MS: '2000', BENCH_LIVE_CHANGE_MS: '1000' },
    // A claim and a release per latency part and per backend-load window.
    check: { BENCH_LIVE_SAMPLES: '2', BENCH_LIVE_WINDOW_MS: '1000', BENCH_LIVE_CHANGE_MS: '500' },
    figures: (md) => {
      const calls = rowsOf(md, /^(no watcher|watcher)/).map((r) => Number(r[1]));
      const p50 = rowsOf(md, /^Nomad claim/).map((r) => r[2]!);
      return [
        ...(calls.length === 2
          ? [
              ['list with attachments: backend calls, watcher ÷ none', (calls[1]! / calls[0]!).toFixed(3)] as [
                string,
                string,
              ],
            ]
          : []),
        ...p50.map((p): [string, string] => ['Nomad change to client p50 ms', p]),
      ];
    },
  },
  {
    name: 'soak',
    script: 'bench/soak.ts',
    shares: true,
    quick: { SOAK_SHORT: '1' },
    // Every kind of request (3) and of session (4: the fourth hangs up) in each of its 2 rounds.
    check: { SOAK_ROUNDS: '2', SOAK_REQUESTS: '30', SOAK_SESSIONS: '8', SOAK_IDLE_MS: '200' },
    full: false,
    figures: (md) => {
      const rows = rowsOf(md, /^\d+$/);
      const last = rows.at(-1);
      return last && rows[1]
        ? [['heap used, last round ÷ round 1', (Number(last[3]) / Number(rows[1][3])).toFixed(2)]]
        : [];
    },
  },
];

/** Which mode of each benchmark a run takes: quick (`npm run bench`), full (`--full`) or check (`--check`). */
export type Mode = 'quick' | 'full' | 'check';

/** The environment a benchmark runs with in `mode` (`mdPath`: where a quick or check mode writes its results). */
export function envOf(b: Bench, mode: Mode, mdPath?: string): Record<string, string> {
  if (mode === 'full') return {};
  return { ...b.quick, ...(mode === 'check' ? b.check : {}), BENCH_OUT: mdPath! };
}

/** What one benchmark's run gave. */
export interface Outcome {
  name: string;
  status: 'ok' | 'failed' | 'skipped';
  seconds: number;
  figures: Array<[string, string]>;
  /** Its stderr's last lines, when it failed. */
  error?: string;
}

function runOne(b: Bench, mode: Mode, dir: string | undefined): Promise<Outcome> {
  if (!existsSync(join(root, b.script)))
    return Promise.resolve({ name: b.name, status: 'skipped', seconds: 0, figures: [] });
  const full = mode === 'full';
  const mdPath = dir ? join(dir, `${b.name}.md`) : undefined;
  const env = { ...process.env, ...envOf(b, mode, mdPath) };
  const t0 = performance.now();
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', b.script], {
      cwd: root,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => {
      stdout += d.toString();
      if (full) process.stdout.write(d);
    });
    child.stderr.on('data', (d: Buffer) => {
      stderr += d.toString();
      process.stderr.write(d);
    });
    child.on('close', (code) => {
      const seconds = (performance.now() - t0) / 1000;
      if (dir) writeFileSync(join(dir, `${b.name}.out`), stdout);
      const ratios = [...stdout.matchAll(/^ratio: (.+?) = (\S+.*)$/gm)].map((m): [string, string] => [m[1]!, m[2]!]);
      const md = mdPath && existsSync(mdPath) ? readFileSync(mdPath, 'utf8') : '';
      const figures = [...ratios, ...(md && b.figures ? b.figures(md) : [])];
      resolve(
        code === 0
          ? { name: b.name, status: 'ok', seconds, figures }
          : {
              name: b.name,
              status: 'failed',
              seconds,
              figures,
              error: stderr.trim().split('\n').slice(-5).join(' / '),
            },
      );
    });
  });
}

/**
 * The benchmarks `mode` runs, in order, as batches run one after the other: full modes each alone;
 * quick modes each alone, but for neighbouring ones that share the machine ({@link Bench.shares}),
 * which make one batch; check modes all in one batch (they measure nothing).
 */
export function batches(benches: Bench[], mode: Mode): Bench[][] {
  if (mode === 'check') return benches.length ? [benches] : [];
  const out: Bench[][] = [];
  for (const b of benches.filter((x) => !(mode === 'full' && x.full === false))) {
    const last = out.at(-1);
    if (mode === 'quick' && b.shares && last?.[0]!.shares) last.push(b);
    else out.push([b]);
  }
  return out;
}

/** Runs the benchmarks' `mode` in {@link batches}; answers what each gave, in {@link BENCHES}' order. */
export async function runBenches(mode: Mode, dir?: string, only?: string[]): Promise<Outcome[]> {
  const outcomes: Outcome[] = [];
  for (const batch of batches(
    BENCHES.filter((b) => !only || only.includes(b.name)),
    mode,
  )) {
    console.error(`── ${batch.map((b) => b.name).join(', ')} (${mode}${batch.length > 1 ? ', side by side' : ''}) …`);
    outcomes.push(...(await Promise.all(batch.map((b) => runOne(b, mode, dir)))));
  }
  return outcomes;
}

/** The ratio table, markdown. */
export function table(outcomes: Outcome[]): string {
  const lines = ['| bench | status | s | figure | value |', '|---|---|---|---|---|'];
  for (const o of outcomes) {
    const head = `| ${o.name} | ${o.status}${o.error ? `: ${o.error.replace(/\|/g, '/').slice(0, 200)}` : ''} | ${o.seconds.toFixed(0)}`;
    if (o.figures.length === 0) lines.push(`${head} | | |`);
    o.figures.forEach(([k, v], i) => lines.push(`${i === 0 ? head : '| | |'} | ${k} | ${v} |`));
  }
  return lines.join('\n');
}

async function main(): Promise<void> {
  const mode: Mode = process.argv.includes('--full') ? 'full' : process.argv.includes('--check') ? 'check' : 'quick';
  const dir = mode === 'full' ? undefined : (process.env.QUICK_DIR ?? mkdtempSync(join(tmpdir(), `bench-${mode}-`)));
  if (dir) mkdirSync(dir, { recursive: true });
  const only = process.env.BENCH_ONLY?.split(',').map((s) => s.trim());
  const t0 = performance.now();
  // Before any benchmark, so those running side by side do not each find it stale and rebuild at once.
  ensureGatewayBuild();
  const built = (performance.now() - t0) / 1000;
  const outcomes = await runBenches(mode, dir, only);
  if (dir) writeFileSync(join(dir, 'summary.json'), JSON.stringify(outcomes, null, 2));
  console.log(table(outcomes));
  console.log(
    `${((performance.now() - t0) / 1000).toFixed(0)} s (gateway build ${built.toFixed(0)} s)${dir ? `; results and output in ${dir}` : ''}`,
  );
  if (outcomes.some((o) => o.status === 'failed')) process.exit(1);
}

if (require.main === module) void main();
