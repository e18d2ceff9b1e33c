/**
 * A standalone simulator (`simulators/<kind>/main.ts`) as a child process, for fault tests that
 * need real signals: SIGKILL it, then start it again on the same port with the same seed (the
 * demo seed is fixed: same ids, same raft indexes), as a Nomad restart with persisted state.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';

const root = join(__dirname, '..', '..');

export interface SimProcess {
  /** The simulator's base URL (the same after a restart). */
  url: string;
  child: ChildProcess;
  /** SIGKILL (a crash, not a shutdown); resolves once the process is gone. */
  kill(): Promise<void>;
  /** Starts it again on the same port with the same environment; resolves once it listens. */
  restart(): Promise<void>;
}

const running = new Set<ChildProcess>();

/** Kills every simulator process still running (afterEach/afterAll). */
export async function killSimProcesses(): Promise<void> {
  await Promise.all([...running].map(async (c) => {
    if (c.exitCode === null && c.signalCode === null) {
      const gone = once(c, 'exit');
      c.kill('SIGKILL');
      await gone;
    }
    running.delete(c);
  }));
}

async function launch(entry: string, env: Record<string, string>, listening: RegExp): Promise<{ child: ChildProcess; match: RegExpExecArray }> {
  const child = spawn(process.execPath, ['--import', 'tsx', entry], { cwd: root, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  running.add(child);
  let out = '';
  let err = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
  const end = Date.now() + 30_000;
  for (;;) {
    const match = listening.exec(out);
    if (match) return { child, match };
    if (child.exitCode !== null || Date.now() > end) throw new Error(`${entry} did not start: ${err || out}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** The Nomad simulator seeded with the demo cluster (`variant`), on a free port. */
export async function startNomadProcess(variant: 'east' | 'west' = 'east'): Promise<SimProcess> {
  const listening = /listening on (http:\/\/[\d.]+:(\d+))/;
  const first = await launch('simulators/nomad/main.ts', { PORT: '0', NOMAD_SIM_VARIANT: variant }, listening);
  const port = first.match[2]!;
  const p: SimProcess = {
    url: first.match[1]!,
    child: first.child,
    async kill() {
      const c = p.child;
      if (c.exitCode !== null || c.signalCode !== null) return;
      const gone = once(c, 'exit');
      c.kill('SIGKILL');
      await gone;
      running.delete(c);
    },
    async restart() {
      p.child = (await launch('simulators/nomad/main.ts', { PORT: port, NOMAD_SIM_VARIANT: variant }, listening)).child;
    },
  };
  return p;
}
