/**
 * A real redis-server (Debian package `redis-server`, installed by scripts/system-deps.sh) on a
 * free loopback port, without persistence, for the scale-out tests. `stopRedisServers()` stops
 * every server started here.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { existsSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';

export const REDIS_SERVER = '/usr/bin/redis-server';

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
// A test process that dies without afterAll must not leave servers behind.
process.once('exit', () => {
  for (const s of running) s.process.kill('SIGKILL');
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
}

/** Spawns redis-server on `port` with `extra` arguments; null when a port is taken. */
async function spawnRedis(
  port: number,
  password: string | undefined,
  extra: readonly string[] = [],
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
  ];
  if (password) args.push('--requirepass', password);
  args.push(...extra);
  const child = spawn(REDIS_SERVER, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  const exited = once(child, 'exit');
  const ready = new Promise<boolean>((resolve) => {
    const onData = (d: Buffer): void => {
      out += d.toString();
      if (/Ready to accept connections/.test(out)) resolve(true);
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
  let current = await spawnRedis(port, password, extra);
  if (!current) return null;
  const gone = async (signal: NodeJS.Signals): Promise<void> => {
    running.delete(server);
    const { child, exited } = current!;
    if (child.exitCode === null && child.signalCode === null) {
      child.kill(signal);
      await exited;
    }
  };
  const restart = async (): Promise<void> => {
    await gone('SIGKILL');
    current = await spawnRedis(port, password, extra);
    if (!current) throw new Error(`redis-server: port ${port} was taken before the restart`);
    server.process = current.child;
    running.add(server);
  };
  const server: RedisServerUnderTest = {
    port,
    url: `redis://${password ? `:${encodeURIComponent(password)}@` : ''}127.0.0.1:${port}`,
    process: current.child,
    kill: () => gone('SIGKILL'),
    stop: () => gone('SIGTERM'),
    restart,
  };
  running.add(server);
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

/** Stops every redis-server this module started (afterAll). */
export async function stopRedisServers(): Promise<void> {
  await Promise.all([...running].map((s) => s.stop()));
}
