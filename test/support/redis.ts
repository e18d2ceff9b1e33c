/**
 * A real redis-server (Debian package `redis-server`, installed by scripts/system-deps.sh) on a
 * free loopback port, without persistence, for the scale-out tests. `stopRedisServers()` stops
 * every server started here.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer, type AddressInfo } from 'node:net';

export const REDIS_SERVER = '/usr/bin/redis-server';
export const REDIS_SENTINEL = '/usr/bin/redis-sentinel';

export interface RedisServerUnderTest {
  port: number;
  /** `redis://127.0.0.1:<port>` (with `:password@` when started with one). */
  url: string;
  process: ChildProcess;
  /** SIGKILL (a crash, not a shutdown); resolves once the process is gone. */
  kill(): Promise<void>;
  /** SIGTERM; resolves once the process is gone. */
  stop(): Promise<void>;
  /** SIGKILL if still running, then a new, empty redis-server on the same port (no persistence: the data is gone). */
  restart(): Promise<void>;
}

const running = new Set<RedisServerUnderTest>();
/** The directories of the servers started with one ({@link RedisServerOptions.dir}), until stopped. */
const dirs = new Map<RedisServerUnderTest, string>();
// A test process that dies without afterAll must not leave servers (or their directories) behind.
process.once('exit', () => {
  for (const s of running) s.process.kill('SIGKILL');
  for (const d of dirs.values()) rmSync(d, { recursive: true, force: true });
});

/** A TCP port free on 127.0.0.1 now (another process may take it before it is bound: callers retry). */
export async function freePort(): Promise<number> {
  const srv = createServer();
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', () => r()));
  const port = (srv.address() as AddressInfo).port;
  await new Promise<void>((r) => srv.close(() => r()));
  return port;
}

/** Options of {@link startRedisServer}. */
export interface RedisServerOptions {
  /** `requirepass`. @default none */
  password?: string;
  /**
   * More redis-server arguments (e.g. a Cluster node's) for the server on `port`, asked for again
   * on each attempt, so that ports they name can be chosen afresh when one was taken. @default none
   */
  args?: (port: number) => Promise<string[]>;
  /**
   * A directory of the server's own (its `--dir`, a Cluster node's `nodes.conf`): removed once the
   * server is stopped (`stop()`, `stopRedisServers()`, the test process's exit); `kill()` keeps it
   * for `restart()`. @default none
   */
  dir?: string;
}

/**
 * Spawns redis-server on `port` (with `args` after the defaults; `sentinel: true` runs it as a
 * sentinel with the config file `args[0]` and the rest after the defaults); null when the port is taken.
 */
export async function spawnRedis(
  port: number,
  password: string | undefined,
  o: { args?: readonly string[]; sentinel?: boolean } = {},
): Promise<{ child: ChildProcess; exited: Promise<unknown> } | null> {
  const args = [
    '--port',
    String(port),
    '--bind',
    '127.0.0.1',
    '--save',
    '',
    '--appendonly',
    'no',
    '--daemonize',
    'no',
    '--loglevel',
    'notice',
    // A directory of its own: a replica's full sync writes dump.rdb there, and a server started
    // in the same directory later would load it (no persistence does not stop loading).
    '--dir',
    mkdtempSync(join(tmpdir(), 'vg-redis-')),
    // A replica's first sync starts at once, not after the 5 s Redis waits for more replicas.
    '--repl-diskless-sync-delay',
    '0',
  ];
  if (password) args.push('--requirepass', password, '--masterauth', password);
  // A sentinel's config file comes first; its other arguments, like a server's, after the defaults they override.
  const [conf, ...rest] = o.args ?? [];
  if (o.sentinel) args.unshift(conf!, '--sentinel');
  args.push(...(o.sentinel ? rest : (o.args ?? [])));
  const child = spawn(o.sentinel ? REDIS_SENTINEL : REDIS_SERVER, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  const exited = once(child, 'exit');
  const ready = new Promise<boolean>((resolve) => {
    const onData = (d: Buffer): void => {
      out += d.toString();
      if (/Ready to accept connections|Sentinel ID is/.test(out)) resolve(true);
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    // 'close', not 'exit': the last of its output (why it stopped) may come after 'exit'.
    child.once('close', () => resolve(false));
  });
  if (!(await ready)) {
    // Most likely the port was taken between choosing and binding it: the caller retries.
    if (/Address already in use/i.test(out)) return null;
    throw new Error(`redis-server did not start:\n${out}`);
  }
  return { child, exited };
}

async function startOnce(port: number, o: RedisServerOptions): Promise<RedisServerUnderTest | null> {
  const { password } = o;
  const extra = (await o.args?.(port)) ?? [];
  let current = await spawnRedis(port, password, { args: extra });
  if (!current) return null;
  const gone = async (signal: NodeJS.Signals): Promise<void> => {
    running.delete(server);
    const { child, exited } = current!;
    if (child.exitCode === null && child.signalCode === null) {
      // A paused server (SIGSTOP) would not act on SIGTERM.
      child.kill('SIGCONT');
      child.kill(signal);
      await exited;
    }
  };
  const stop = async (): Promise<void> => {
    await gone('SIGTERM');
    if (o.dir) rmSync(o.dir, { recursive: true, force: true });
    dirs.delete(server);
  };
  const restart = async (): Promise<void> => {
    await gone('SIGKILL');
    current = await spawnRedis(port, password, { args: extra });
    if (!current) throw new Error(`redis-server: port ${port} was taken before the restart`);
    server.process = current.child;
    running.add(server);
  };
  const server: RedisServerUnderTest = {
    port,
    url: `redis://${password ? `:${encodeURIComponent(password)}@` : ''}127.0.0.1:${port}`,
    process: current.child,
    kill: () => gone('SIGKILL'),
    stop,
    restart,
  };
  running.add(server);
  if (o.dir) dirs.set(server, o.dir);
  return server;
}

/** Starts redis-server on a free loopback port (no persistence, not daemonized), with `requirepass` when `password` is given. */
export async function startRedisServer(options: RedisServerOptions = {}): Promise<RedisServerUnderTest> {
  if (!existsSync(REDIS_SERVER))
    throw new Error(`${REDIS_SERVER} is missing: run scripts/system-deps.sh (Debian package redis-server)`);
  for (let attempt = 0; attempt < 5; attempt++) {
    const server = await startOnce(await freePort(), options);
    if (server) return server;
  }
  throw new Error('redis-server: no free port after 5 attempts');
}

/** Stops every redis-server this module started (afterAll), and removes their directories. */
export async function stopRedisServers(): Promise<void> {
  await Promise.all([...new Set([...running, ...dirs.keys()])].map((s) => s.stop()));
}
