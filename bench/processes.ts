/** Shared by the benchmarks: child processes that announce readiness on stdout, and the machine facts every result carries. */
import { spawn, execSync, type ChildProcess } from 'node:child_process';
import { existsSync, rmSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { cpus, platform, release, totalmem } from 'node:os';
import { join } from 'node:path';

export const root = join(__dirname, '..');

/** Every process started, so a failed run still stops them (else they hold the caller's pipes open). */
export const started: ChildProcess[] = [];

/** Whether `taskset` exists here (Linux, util-linux). */
export const canPin = existsSync('/usr/bin/taskset');

/** `[taskset -c cpus] node …args` as a command and its arguments; unpinned without `cpus` or taskset. */
export function pinned(cpus: string | undefined, args: string[]): [string, string[]] {
  return cpus && canPin ? ['taskset', ['-c', cpus, process.execPath, ...args]] : [process.execPath, args];
}

/** A started process and the match of its ready line. */
export interface Started {
  child: ChildProcess;
  match: RegExpExecArray;
}

/**
 * Starts `node …nodeArgs --import tsx …args` and waits until its stdout matches `ready`.
 * `cpus` pins it (taskset list, e.g. "1"). @default unpinned
 */
export function start(
  args: string[],
  env: Record<string, string>,
  ready: RegExp,
  nodeArgs: string[] = [],
  cpus?: string,
): Promise<Started> {
  return spawnReady(['--import', 'tsx', ...args], env, ready, nodeArgs, cpus);
}

/**
 * Starts compiled JavaScript (`node …nodeArgs path`, no tsx) and waits until its stdout matches
 * `ready`. `cpus` pins it (taskset list). @default unpinned
 */
export function startCompiled(
  path: string,
  env: Record<string, string>,
  ready: RegExp,
  nodeArgs: string[] = [],
  cpus?: string,
): Promise<Started> {
  return spawnReady([path], env, ready, nodeArgs, cpus);
}

function spawnReady(
  args: string[],
  env: Record<string, string>,
  ready: RegExp,
  nodeArgs: string[],
  cpus?: string,
): Promise<Started> {
  const [cmd, argv] = pinned(cpus, [...nodeArgs, ...args]);
  const child = spawn(cmd, argv, { cwd: root, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'inherit'] });
  started.push(child);
  return new Promise((resolve, reject) => {
    let buf = '';
    const timer = setTimeout(() => reject(new Error(`${args.join(' ')} did not start: ${buf}`)), 60_000);
    const collect = (d: Buffer): void => {
      buf += d.toString();
      const m = ready.exec(buf);
      if (m) {
        clearTimeout(timer);
        // Ready: stop collecting (a gateway at LOG_LEVEL=info logs every request, and each chunk
        // would be searched with all before it); the output is still read, so the child never blocks.
        child.stdout.off('data', collect);
        child.stdout.resume();
        resolve({ child, match: m });
      }
    };
    child.stdout.on('data', collect);
    child.once('exit', (code) => reject(new Error(`${args.join(' ')} exited with ${code}: ${buf}`)));
  });
}

/** Where the gateway under test is compiled to (same depth as `dist/`, so it finds package.json and schema/). */
const BUILD = join(root, '.bench-build');
const SOURCES = [
  'adapters',
  'domain',
  'resolvers',
  'schema',
  'server',
  'simulators',
  'subscriptions',
  'package.json',
  'tsconfig.json',
  'tsconfig.build.json',
];

function newest(path: string): number {
  const st = statSync(path);
  if (!st.isDirectory()) return st.mtimeMs;
  return readdirSync(path).reduce((m, f) => Math.max(m, newest(join(path, f))), st.mtimeMs);
}

/**
 * Compiles the gateway with tsc as `npm start` does (into `.bench-build/`, not `dist/`, which
 * `npm start` and the tests' own builds write), unless that build is newer than every source.
 * Benchmarks measure the compiled gateway users run, not tsx's transpile: tsx keeps function
 * names by defining `name` on every closure it creates, which costs CPU and ~3 KiB of heap per
 * subscription that production never pays.
 */
export function ensureGatewayBuild(): void {
  const stamp = join(BUILD, '.stamp');
  if (existsSync(stamp) && statSync(stamp).mtimeMs >= Math.max(...SOURCES.map((s) => newest(join(root, s))))) return;
  // tsc never deletes: a moved or removed source would leave its old output to be required instead.
  rmSync(BUILD, { recursive: true, force: true });
  // --noCheck: the same JavaScript (diffed) in about three quarters of the time; `npm run typecheck` checks the types.
  execSync(
    `"${process.execPath}" node_modules/typescript/bin/tsc -p tsconfig.build.json --outDir .bench-build --noCheck`,
    { cwd: root, stdio: 'inherit' },
  );
  writeFileSync(stamp, new Date().toISOString());
}

/** Gateway setting every benchmark's gateway starts with (a caller's own value wins). */
export const NO_DRAIN = { SHUTDOWN_DRAIN_MS: '0' } as const;

/**
 * Starts the compiled gateway (`node …nodeArgs .bench-build/server/main.js`) and waits until its
 * stdout matches `ready`. `cpus` pins it (taskset list). @default unpinned
 */
export function startBuiltGateway(
  env: Record<string, string>,
  ready: RegExp,
  nodeArgs: string[] = [],
  cpus?: string,
): Promise<Started> {
  ensureGatewayBuild();
  // No load balancer to take it out of rotation: SIGTERM stops it at once, not after the 5 s drain
  // (SHUTDOWN_DRAIN_MS) every stopped gateway would otherwise add to a run.
  return startCompiled('.bench-build/server/main.js', { ...NO_DRAIN, ...env }, ready, nodeArgs, cpus);
}

/** The graphql-ws URL (IPv4 loopback) of a gateway that announced `readyUrl` (its HTTP endpoint). */
export function wsUrlOf(readyUrl: string): string {
  const u = new URL(readyUrl.replace('localhost', '127.0.0.1'));
  return `ws://127.0.0.1:${u.port}${u.pathname}`;
}

/** A process's resident set size, in KiB. */
export function rssKiB(pid: number): number {
  return Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]);
}

/**
 * CPU time a process has used so far (user + system, from `/proc/<pid>/stat`), in ms: what
 * `process.cpuUsage()` reports inside it, read from outside so any build can be measured.
 * Linux clock ticks are 10 ms, so divide a delta over hundreds of requests.
 */
export function cpuMs(pid: number): number {
  const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(f[11]) + Number(f[12])) * 10;
}

/**
 * What the scheduler counted for a process so far, summed over its threads
 * (`/proc/<pid>/task/<tid>/schedstat`), in ms to the nanosecond: `runMs`, time on a CPU (user and
 * system alike; finer than {@link cpuMs}'s 10 ms ticks, for spans of tens of ms), and `waitMs`,
 * time runnable but waiting for a CPU (what sharing the cores cost it). A thread that ended takes
 * its time with it.
 */
export function schedMs(pid: number): { runMs: number; waitMs: number } {
  let run = 0;
  let wait = 0;
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      const [r, w] = readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').split(' ');
      run += Number(r);
      wait += Number(w);
    } catch {
      // the thread ended between the listing and the read
    }
  }
  return { runMs: run / 1e6, waitMs: wait / 1e6 };
}

/**
 * Run time so far ({@link schedMs}) of every user-space process on the machine but those in
 * `exclude`, by pid: what else ran beside a benchmark. Kernel threads (no command line) are left
 * out: they include the network's deferred work, which the benchmark itself causes.
 */
export function otherProcessesRunMs(exclude: ReadonlySet<number>): Map<number, number> {
  const out = new Map<number, number>();
  for (const name of readdirSync('/proc')) {
    const pid = Number(name);
    if (!Number.isInteger(pid) || exclude.has(pid)) continue;
    try {
      if (readFileSync(`/proc/${pid}/cmdline`).length === 0) continue;
      out.set(pid, schedMs(pid).runMs);
    } catch {
      // the process ended meanwhile
    }
  }
  return out;
}

/** Time the hypervisor ran something else on this machine's CPUs so far (`steal` of `/proc/stat`), in ms (10 ms ticks). */
export function stealMs(): number {
  return Number(readFileSync('/proc/stat', 'utf8').split('\n', 1)[0]!.trim().split(/\s+/)[8]) * 10;
}

/** Kills whatever is still running (after a failed run). */
export function killStarted(): void {
  for (const c of started) if (c.exitCode === null) c.kill('SIGKILL');
}

/** The machine-facts table (markdown) every result section starts with. */
export function machineFacts(): string {
  let commit = 'unknown';
  try {
    commit = execSync('git rev-parse --short HEAD', { cwd: root }).toString().trim();
  } catch {
    // not a git checkout
  }
  const cpu = cpus();
  return `| machine | |
|---|---|
| CPU | ${cpu[0]?.model ?? 'unknown'} × ${cpu.length} |
| memory | ${(totalmem() / 2 ** 30).toFixed(1)} GiB |
| OS | ${platform()} ${release()} |
| Node.js | ${process.version} |
| commit | ${commit} |`;
}
