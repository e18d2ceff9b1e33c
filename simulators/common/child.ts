/**
 * A standalone simulator (`main.ts`) as a child process, for fault tests and attack replays that
 * stop it with real signals (SIGSTOP/SIGCONT): simulators inside the caller's process cannot be.
 * It listens on free loopback ports and is ready once its banner is out.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';

const ROOT = join(__dirname, '..', '..');
const MAIN = { nomad: 'simulators/nomad/main.ts', openstack: 'simulators/openstack/main.ts' } as const;
/** The line that ends each banner: the simulator listens once it is out. */
const READY = { nomad: /analytics read-only token: (\S+)\n/, openstack: /application credential: .*\n/ } as const;

export interface SimulatorProcess {
  child: ChildProcess;
  pid: number;
  /** Everything the simulator printed (URLs, demo credentials). */
  banner: string;
  /** SIGSTOP: the process keeps its sockets but answers nothing. */
  pause(): void;
  /** SIGCONT. */
  resume(): void;
  /** Continues it if paused, then SIGTERM; resolves when it exited (SIGKILL after 5 s). */
  close(): Promise<void>;
  /** SIGKILL (a crash, not a shutdown); resolves when it exited. */
  kill(): Promise<void>;
}

/** Starts `simulators/<kind>/main.ts` with `node --import tsx` on ephemeral ports. */
export function startSimulatorProcess(
  kind: 'nomad' | 'openstack',
  env: Record<string, string> = {},
): Promise<SimulatorProcess> {
  const ports = kind === 'nomad' ? { PORT: '0' } : { KEYSTONE_PORT: '0', CINDER_PORT: '0', NOVA_PORT: '0' };
  const child = spawn(process.execPath, ['--import', 'tsx', MAIN[kind]], {
    cwd: ROOT,
    env: { ...process.env, HOST: '127.0.0.1', ...ports, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let exited = false;
  child.once('exit', () => (exited = true));
  return new Promise((resolve, reject) => {
    let out = '';
    let err = '';
    const timer = setTimeout(
      () => fail(new Error(`${kind} simulator did not start within 60 s: ${out}${err}`)),
      60_000,
    );
    const fail = (e: Error): void => {
      clearTimeout(timer);
      child.kill('SIGKILL');
      reject(e);
    };
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.once('exit', (code) => fail(new Error(`${kind} simulator exited with ${code}: ${out}${err}`)));
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      if (!READY[kind].test(out)) return;
      clearTimeout(timer);
      child.removeAllListeners('exit');
      child.once('exit', () => (exited = true));
      resolve({
        child,
        pid: child.pid!,
        banner: out,
        pause: () => void child.kill('SIGSTOP'),
        resume: () => void child.kill('SIGCONT'),
        close: () =>
          new Promise<void>((done) => {
            if (exited) return done();
            const kill = setTimeout(() => child.kill('SIGKILL'), 5_000);
            child.once('exit', () => (clearTimeout(kill), done()));
            child.kill('SIGCONT');
            child.kill('SIGTERM');
          }),
        kill: () =>
          new Promise<void>((done) => {
            if (exited) return done();
            child.once('exit', () => done());
            child.kill('SIGKILL');
          }),
      });
    });
  });
}

/** The Nomad simulator's URL and management token, from its banner. */
export function nomadBanner(banner: string): { url: string; managementToken: string } {
  const url = /listening on (http:\/\/\S+)/.exec(banner)?.[1];
  const token = /management token: (\S+)/.exec(banner)?.[1];
  if (!url || !token) throw new Error(`not a Nomad simulator banner: ${banner}`);
  return { url, managementToken: token };
}

/** The OpenStack simulator's Keystone URL, from its banner. */
export function openStackBanner(banner: string): { keystoneUrl: string } {
  const url = /keystone \(OS_AUTH_URL\): (http:\/\/\S+)/.exec(banner)?.[1];
  if (!url) throw new Error(`not an OpenStack simulator banner: ${banner}`);
  return { keystoneUrl: url };
}
