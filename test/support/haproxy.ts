/**
 * A real HAProxy (Debian package `haproxy`, installed by scripts/system-deps.sh) on a free loopback
 * port in front of a list of gateway replicas, with the configuration written from
 * deploy/haproxy/haproxy.cfg (one `server` line per replica). It runs in master-worker mode, so
 * `reload()` is HAProxy's own graceful reload: a new worker takes new connections while the old
 * one finishes its own. `stopHaproxies()` stops every one started here; one this process leaves
 * running, however it ends, is stopped by its watchdog (below).
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { freePort } from './redis';
import { until } from './until';

export const HAPROXY = '/usr/sbin/haproxy';
/** The configuration every load balancer here is written from. */
export const HAPROXY_TEMPLATE = join(__dirname, '..', '..', 'deploy', 'haproxy', 'haproxy.cfg');

/** A replica's `server` line in the template: `server replica1 "${VG_REPLICA1-…}"` and its options. */
const SERVER_LINE = /^(\s*)server replica\d+ "\$\{VG_REPLICA\d+(?:-[^}]*)?\}"(.*)$/;

/** Options of {@link haproxyConfig}. */
export interface HaproxyConfigOptions {
  /** Where the load balancer listens, `host:port`. */
  bind: string;
  /** Where HAProxy's stats page listens, `host:port`. */
  statsBind: string;
  /** The replicas, `host:port` or URLs (`http://127.0.0.1:4001/graphql`); named replica1, replica2 … in this order. */
  servers: readonly string[];
}

/** `host:port` of a replica given as `host:port` or as a URL. */
export function serverAddress(server: string): string {
  return /^https?:\/\//.test(server) ? new URL(server).host : server;
}

/**
 * The template with the listeners' addresses filled in and one `server` line per replica, each
 * with the options of the template's first one.
 * @throws Error when the template has no replica `server` line, or `servers` is empty
 */
export function haproxyConfig(template: string, o: HaproxyConfigOptions): string {
  if (o.servers.length === 0) throw new Error('haproxy: at least one replica is needed');
  const lines = template.split('\n');
  const first = lines.findIndex((l) => SERVER_LINE.test(l));
  if (first < 0) throw new Error('haproxy template: no `server replicaN "${VG_REPLICAN}"` line');
  const [, indent, options] = SERVER_LINE.exec(lines[first]!)!;
  const servers = o.servers.map((s, i) => `${indent}server replica${i + 1} ${serverAddress(s)}${options}`);
  const kept = lines.filter((l) => !SERVER_LINE.test(l));
  kept.splice(first, 0, ...servers);
  return kept
    .join('\n')
    .replace(/"\$\{VG_LB_BIND(?:-[^}]*)?\}"/, o.bind)
    .replace(/"\$\{VG_LB_STATS_BIND(?:-[^}]*)?\}"/, o.statsBind);
}

export interface HaproxyUnderTest {
  /** `http://127.0.0.1:<port>`: the load balancer (append `/graphql`, `/live` …). */
  url: string;
  port: number;
  /** HAProxy's stats page (`/;csv` for its CSV). */
  statsUrl: string;
  /** HAProxy's master's pid (the one to signal). */
  pid: number;
  /** The configuration file in use (rewritten by {@link reload}). */
  configPath: string;
  /** The watchdog shell HAProxy runs under: it exits when HAProxy does. */
  process: ChildProcess;
  /** What HAProxy printed (server state changes, alerts). */
  output(): string;
  /** Each replica's state as HAProxy's health checks see it, e.g. `{ replica1: 'UP', replica2: 'DOWN' }`. */
  serverStates(): Promise<Record<string, string>>;
  /** Rewrites the configuration for `servers` and reloads gracefully; resolves once a new worker serves it. */
  reload(servers: readonly string[]): Promise<void>;
  /** SIGTERM to the master (its workers stop with it); resolves once it exited, and removes its files. */
  stop(): Promise<void>;
}

const running = new Set<HaproxyUnderTest>();

/**
 * HAProxy run by a shell that stops it once this process's end of the shell's stdin closes, which
 * happens however this process ends: an `exit` listener would not do, since jest's sandboxed
 * `process` never calls it and a SIGKILL runs none. The shell's first line is HAProxy's pid; it
 * exits when HAProxy does, with its status, and removes HAProxy's files.
 */
const WATCHDOG =
  'exec 3<&0; "$0" "$@" </dev/null 3<&- & pid=$!; echo "haproxy pid $pid"; ' +
  '(read _ <&3; kill $pid) >/dev/null 2>&1 & exec 3<&-; wait $pid; s=$?; rm -rf "$VG_HAPROXY_DIR"; exit $s';

/** One command on HAProxy's master CLI (a Unix socket), its whole answer. */
function masterCli(socket: string, command: string): Promise<string> {
  return new Promise((resolve, reject) => {
    let out = '';
    const c = connect(socket, () => c.end(`${command}\n`));
    c.on('data', (d: Buffer) => (out += d.toString()));
    c.on('error', reject);
    c.on('close', () => resolve(out));
  });
}

/** The pids of the master's current workers (`show proc`, before its "# old workers" part). */
async function currentWorkers(socket: string): Promise<number[]> {
  const text = (await masterCli(socket, 'show proc')).split('# old workers')[0]!;
  return [...text.matchAll(/^(\d+)\s+worker\b/gm)].map((m) => Number(m[1]));
}

async function check(configPath: string): Promise<void> {
  try {
    await promisify(execFile)(HAPROXY, ['-c', '-q', '-f', configPath]);
  } catch (err) {
    const detail = (err as { stderr?: string }).stderr ?? String(err);
    throw new Error(`haproxy: invalid configuration ${configPath}: ${detail}`, { cause: err });
  }
}

async function startOnce(servers: readonly string[], dir: string, port: number): Promise<HaproxyUnderTest | null> {
  const template = readFileSync(HAPROXY_TEMPLATE, 'utf8');
  const statsPort = await freePort();
  const configPath = join(dir, 'haproxy.cfg');
  const socket = join(dir, 'master.sock');
  const write = (list: readonly string[]): void =>
    writeFileSync(
      configPath,
      haproxyConfig(template, { bind: `127.0.0.1:${port}`, statsBind: `127.0.0.1:${statsPort}`, servers: list }),
    );
  write(servers);
  await check(configPath);
  const child = spawn('/bin/sh', ['-c', WATCHDOG, HAPROXY, '-W', '-S', socket, '-f', configPath], {
    env: { ...process.env, VG_HAPROXY_DIR: dir },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (out += d.toString()));
  const exited = once(child, 'exit');
  const statsUrl = `http://127.0.0.1:${statsPort}/`;
  const serving = async (): Promise<boolean> => {
    try {
      return (await fetch(`${statsUrl};csv`)).ok;
    } catch {
      return false;
    }
  };
  await until(
    async () => child.exitCode !== null || (existsSync(socket) && (await serving())),
    () => `haproxy to serve:\n${out}`,
    30_000,
    50,
  );
  if (child.exitCode !== null) {
    child.stdin.end();
    // Most likely a port was taken between choosing and binding it: the caller retries.
    if (/cannot bind socket|Address already in use/i.test(out)) return null;
    throw new Error(`haproxy did not start:\n${out}`);
  }
  const pid = Number(/^haproxy pid (\d+)$/m.exec(out)![1]);
  const lb: HaproxyUnderTest = {
    url: `http://127.0.0.1:${port}`,
    port,
    statsUrl,
    pid,
    configPath,
    process: child,
    output: () => out,
    async serverStates() {
      const csv = await (await fetch(`${statsUrl};csv`)).text();
      return Object.fromEntries(
        csv
          .split('\n')
          .map((l) => l.split(','))
          .filter((f) => f[0] === 'replicas' && /^replica\d+$/.test(f[1] ?? ''))
          .map((f) => [f[1]!, f[17]!]),
      );
    },
    async reload(list) {
      const before = await currentWorkers(socket);
      write(list);
      await check(configPath);
      process.kill(pid, 'SIGUSR2');
      await until(
        async () => {
          const now = await currentWorkers(socket).catch(() => []);
          return now.length > 0 && now.every((p) => !before.includes(p));
        },
        () => `haproxy's new worker after the reload:\n${out}`,
        30_000,
        50,
      );
    },
    async stop() {
      running.delete(lb);
      if (child.exitCode === null && child.signalCode === null) {
        process.kill(pid, 'SIGTERM');
        await exited;
      }
      child.stdin.end();
      rmSync(dir, { recursive: true, force: true });
    },
  };
  running.add(lb);
  return lb;
}

/**
 * Starts HAProxy in front of `servers` (`host:port` or URLs), on a free loopback port (`port` when
 * given), with its stats page on another.
 */
export async function startHaproxy(
  servers: readonly string[],
  options: { port?: number } = {},
): Promise<HaproxyUnderTest> {
  if (!existsSync(HAPROXY))
    throw new Error(`${HAPROXY} is missing: run scripts/system-deps.sh (Debian package haproxy)`);
  for (let attempt = 0; attempt < 5; attempt++) {
    const dir = mkdtempSync(join(tmpdir(), 'vg-haproxy-'));
    const lb = await startOnce(servers, dir, options.port ?? (await freePort()));
    if (lb) return lb;
    rmSync(dir, { recursive: true, force: true });
    if (options.port) break;
  }
  throw new Error(
    `haproxy: could not bind ${options.port ? `port ${options.port} (in use?)` : 'a free port after 5 attempts'}`,
  );
}

/** Stops every HAProxy this module started (afterAll). */
export async function stopHaproxies(): Promise<void> {
  await Promise.all([...running].map((h) => h.stop()));
}
