/**
 * The list's CPU per request (issue 20's settled measurement): user + system time of the gateway
 * process (`/proc/<pid>/stat`, what `process.cpuUsage()` reports inside it) per request, for the
 * plain Nomad list of 100 on the benchmark's simulator at 1 connection, compiled build.
 *
 * Given several checkouts (paths, e.g. `git worktree add --detach /work/wt/old-1b90b7e 1b90b7e`
 * with its own `npm ci`), it builds each with its own tsc into its own `.bench-build-cpu/` (this
 * checkout: `.bench-build/`, as the other benchmarks), starts it
 * with the settings that checkout knows, and measures them alternately over a few rounds (the
 * order reversed every other round), so an old commit is measured back to back with this one.
 *
 * Pinning (two cores): the gateway on CPU 0; the simulator (this checkout's, one process for every
 * gateway) and the load generator (bench/load-child.ts) on CPU 1. No service credential: no
 * watcher, so every commit makes the same one backend call per query.
 *
 *   node --import tsx bench/cpu-per-request.ts [TREE …]   (default: CPU_TREES, space-separated, else this checkout)
 *   CPU_SHORT=1      quick mode: 1 round, 200 requests per checkout
 *   CPU_ROUNDS=n     rounds (default 3, quick 1)
 *   CPU_REQUESTS=n   counted requests per checkout and round (default 1500, quick 200)
 *   BENCH_OUT=path   write the section here (full mode only; default bench/RESULTS.md)
 *
 * Linux only (/proc). Ticks are 10 ms: a figure is a delta over hundreds of requests.
 */
import { median } from './load';
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus as cpuList } from 'node:os';
import { join, resolve } from 'node:path';
import { once } from 'node:events';
import { BENCH_TOKEN } from './constants';
import { pinnedLoad } from './pinned-load';
import {
  canPin,
  cpuMs,
  killStarted,
  machineFacts,
  NO_DRAIN,
  pinned,
  root,
  start,
  startBuiltGateway,
  started,
} from './processes';
import { PLAIN_LIST } from './queries';
import { writeSection } from './results-file';

const short = process.env.CPU_SHORT === '1';
const rounds = Number(process.env.CPU_ROUNDS ?? (short ? 1 : 3));
const requests = Number(process.env.CPU_REQUESTS ?? (short ? 200 : 1500));
const warmup = short ? 50 : 300;
const out = process.env.BENCH_OUT ?? join(__dirname, 'RESULTS.md');
const trees = (
  process.argv.length > 2
    ? process.argv.slice(2)
    : process.env.CPU_TREES?.trim()
      ? process.env.CPU_TREES.trim().split(/\s+/)
      : [root]
).map((t) => resolve(t));
const pinning = canPin && cpuList().length >= 2;
const GATEWAY_CPU = pinning ? '0' : undefined;
const REST_CPU = pinning ? '1' : undefined;
/** The figure to beat (issue 20, settled points): 1b90b7e's, measured the same way. */
const EARLIER_MS = 1.5;

const git = (tree: string, ...args: string[]): string =>
  execFileSync('git', ['-C', tree, ...args], { encoding: 'utf8' }).trim();

/**
 * Settings a checkout is started with: only those its sources name, so an old commit (which
 * knows fewer, and may refuse unknown ones) gets what it understands. Backends: GATEWAY_BACKENDS
 * where known (every commit since 1b90b7e), else the older NOMAD_ADDR / NOMAD_TOKEN pair.
 */
function envFor(tree: string, simUrl: string): Record<string, string> {
  const knows = (name: string): boolean => {
    try {
      git(tree, 'grep', '-q', '-F', name, '--', 'server', 'adapters', 'domain');
      return true;
    } catch {
      return false;
    }
  };
  const env: Record<string, string> = { HOST: '127.0.0.1', PORT: '0', LOG_LEVEL: 'warn' };
  if (knows('GATEWAY_BACKENDS')) env.GATEWAY_BACKENDS = `bench=nomad@${simUrl}`;
  else env.NOMAD_ADDR = simUrl;
  // Per-caller caps would bind at full speed from one token; probes after the first kept out of the runs; no drain on stop.
  const optional = {
    RATE_LIMIT_CALLER_RPS: '0',
    RATE_LIMIT_ADDRESS_RPS: '0',
    READINESS_PROBE_INTERVAL_MS: '3600000',
    ...NO_DRAIN,
  };
  for (const [k, v] of Object.entries(optional)) if (knows(k)) env[k] = v;
  return env;
}

/** Paths that do not reach the build (a change there needs no rebuild). */
const NOT_BUILT = ['bench', 'test', 'docs', 'README.md'];

/** The checkout's built sources: the tree ids at HEAD outside {@link NOT_BUILT}, and a digest of uncommitted changes there. */
function treeState(tree: string): string {
  const outside = NOT_BUILT.map((p) => `:!${p}`);
  const committed = git(tree, 'ls-tree', 'HEAD')
    .split('\n')
    .filter((l) => !NOT_BUILT.includes(l.split('\t')[1]!))
    .join('\n');
  const dirty = git(tree, 'diff', 'HEAD', '--', '.', ...outside);
  return createHash('sha1').update(committed).update(dirty).digest('hex');
}

/**
 * Compiles a checkout with its own tsc and tsconfig.build.json into its `.bench-build-cpu/` (not
 * `.bench-build/`, which bench/processes.ts rebuilds for this checkout), unless built from the same state.
 */
function build(tree: string): void {
  if (tree === root) return; // bench/processes.ts builds this checkout (.bench-build/) as every benchmark does
  const dir = join(tree, '.bench-build-cpu');
  const stamp = join(dir, '.stamp');
  const state = treeState(tree);
  if (existsSync(stamp) && readFileSync(stamp, 'utf8') === state) return;
  rmSync(dir, { recursive: true, force: true });
  console.error(`building ${tree} …`);
  execFileSync(
    process.execPath,
    ['node_modules/typescript/bin/tsc', '-p', 'tsconfig.build.json', '--outDir', '.bench-build-cpu'],
    { cwd: tree, stdio: 'inherit' },
  );
  writeFileSync(stamp, state);
}

/** Gateways being stopped on purpose (their exit is not news). */
const stopping = new WeakSet<ChildProcess>();

/** Starts a checkout's compiled gateway, pinned, from its own directory (its own node_modules). */
async function startGateway(tree: string, env: Record<string, string>): Promise<{ child: ChildProcess; url: string }> {
  if (tree === root) {
    const g = await startBuiltGateway(env, /ready at (\S+)/, [], GATEWAY_CPU);
    return { child: g.child, url: g.match[1]!.replace('localhost', '127.0.0.1') };
  }
  const [cmd, args] = pinned(GATEWAY_CPU, [join(tree, '.bench-build-cpu/server/main.js')]);
  const child = spawn(cmd, args, {
    cwd: tree,
    env: { ...stripGatewayEnv(process.env), ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  started.push(child);
  return await new Promise((ok, fail) => {
    let buf = '';
    const timer = setTimeout(() => fail(new Error(`${tree}: gateway did not start: ${buf}`)), 60_000);
    child.stdout.on('data', (d: Buffer) => {
      buf += d.toString();
      const m = /ready at (\S+)/.exec(buf);
      if (m) {
        clearTimeout(timer);
        ok({ child, url: m[1]!.replace('localhost', '127.0.0.1') });
      }
      buf = buf.slice(-4000); // its last log lines, for an early exit
    });
    child.once('exit', (code, signal) => {
      const why = new Error(`${tree}: gateway exited (${code ?? signal}): ${buf}`);
      if (!stopping.has(child)) console.error(why.message);
      fail(why);
    });
  });
}

/** This process's environment without gateway settings it may have inherited (each checkout gets only its own). */
function stripGatewayEnv(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const keep: NodeJS.ProcessEnv = {};
  for (const k of ['PATH', 'HOME', 'TMPDIR', 'LANG', 'NODE_OPTIONS']) if (env[k] !== undefined) keep[k] = env[k];
  return keep;
}

interface Sample {
  cpuMs: number;
  p50: number;
  throughput: number;
}

async function measure(tree: string, simUrl: string): Promise<Sample> {
  const g = await startGateway(tree, envFor(tree, simUrl));
  try {
    const job = {
      url: g.url,
      headers: { 'content-type': 'application/json', 'x-nomad-token': BENCH_TOKEN },
      body: JSON.stringify({ query: PLAIN_LIST }),
      graphql: true,
      connections: 1,
    };
    await pinnedLoad({ ...job, requests: warmup, warmup: 0 }, REST_CPU);
    const c0 = cpuMs(g.child.pid!);
    const r = await pinnedLoad({ ...job, requests, warmup: 0 }, REST_CPU);
    const used = cpuMs(g.child.pid!) - c0;
    if (r.errors > 0) throw new Error(`${tree}: ${r.errors} failed requests`);
    return { cpuMs: used / r.requests, p50: r.p50, throughput: r.throughput };
  } finally {
    stopping.add(g.child);
    g.child.kill('SIGTERM');
    if (g.child.exitCode === null) await once(g.child, 'exit');
  }
}

async function main(): Promise<void> {
  for (const t of trees) build(t);
  const sim = await start(['bench/sim-server.ts'], {}, /SIM_URL=(\S+)/, [], REST_CPU);
  const simUrl = sim.match[1]!;
  const samples = new Map<string, Sample[]>(trees.map((t) => [t, []]));
  for (let r = 0; r < rounds; r++) {
    for (const tree of r % 2 === 0 ? trees : [...trees].reverse()) {
      const s = await measure(tree, simUrl);
      samples.get(tree)!.push(s);
      console.log(
        `${git(tree, 'rev-parse', '--short', 'HEAD')} round ${r + 1}: ${s.cpuMs.toFixed(2)} ms CPU/request, p50 ${s.p50.toFixed(2)} ms, ${s.throughput.toFixed(0)} req/s`,
      );
    }
  }
  sim.child.kill('SIGTERM');
  await once(sim.child, 'exit');

  const rows = trees.map((tree) => {
    const ss = samples.get(tree)!;
    const cpu = median(ss.map((s) => s.cpuMs));
    const subject = git(tree, 'log', '-1', '--format=%s').replace(/\|/g, '/').slice(0, 70);
    const dirty = git(
      tree,
      'status',
      '--porcelain',
      '--untracked-files=no',
      '--',
      '.',
      ...NOT_BUILT.map((p) => `:!${p}`),
    )
      ? ' + uncommitted changes'
      : '';
    console.log(
      `ratio: list CPU per request ${git(tree, 'rev-parse', '--short', 'HEAD')} ms = ${cpu.toFixed(2)} (÷ ${EARLIER_MS} = ${(cpu / EARLIER_MS).toFixed(2)})`,
    );
    return `| ${git(tree, 'rev-parse', '--short', 'HEAD')}${dirty} | ${git(tree, 'log', '-1', '--format=%cs')} | ${subject} | **${cpu.toFixed(2)}** (${ss.map((s) => s.cpuMs.toFixed(2)).join(', ')}) | ${median(ss.map((s) => s.p50)).toFixed(2)} | ${median(ss.map((s) => s.throughput)).toFixed(0)} |`;
  });
  console.log(rows.join('\n'));
  if (short) return;
  writeSection(
    out,
    'cpu-per-request',
    `## The list's CPU per request, by commit

Generated by \`bench/cpu-per-request.ts\` on ${new Date().toISOString()}: ${rounds} rounds, checkouts alternated (order reversed
every other round), ${requests} counted requests per checkout and round after ${warmup} uncounted, medians (each round in brackets).

${machineFacts()}

Gateway CPU (user + system, \`/proc/<pid>/stat\`) ÷ requests for \`${PLAIN_LIST}\` at 1 connection on the
benchmark's simulated Nomad (100 volumes), each commit's compiled build (its own tsc and dependencies),
started with the settings it knows and no service credential (no watcher: one backend call per query
at every commit). ${pinning ? `Pinned: the gateway on CPU ${GATEWAY_CPU}, the simulator and the load generator on CPU ${REST_CPU}` : 'Not pinned (no taskset or fewer than two CPUs)'}.
The figure to beat is ${EARLIER_MS} ms (1b90b7e, issue 20's settled points); compare commits within this table.

| commit | date | subject | gateway CPU per request (ms) | p50 (ms) | req/s |
|---|---|---|---|---|---|
${rows.join('\n')}
`,
  );
  console.log(`wrote ${out}`);
}

main().catch((err: unknown) => {
  console.error(err);
  killStarted();
  process.exit(1);
});
