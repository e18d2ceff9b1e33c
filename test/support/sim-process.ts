/**
 * A standalone Nomad simulator as a child process (simulators/common/child.ts), for fault tests
 * that need real signals: SIGKILL it, then start it again on the same port with the same seed (the
 * demo seed is fixed: same ids, same raft indexes), as a Nomad restart with persisted state.
 */
import type { ChildProcess } from 'node:child_process';
import { nomadBanner, startSimulatorProcess, type SimulatorProcess } from '../../simulators/common/child';

export interface SimProcess {
  /** The simulator's base URL (the same after a restart). */
  url: string;
  child: ChildProcess;
  /** SIGKILL (a crash, not a shutdown); resolves once the process is gone. */
  kill(): Promise<void>;
  /** Starts it again on the same port with the same environment; resolves once it listens. */
  restart(): Promise<void>;
}

const running = new Set<SimulatorProcess>();

async function start(env: Record<string, string>): Promise<SimulatorProcess> {
  const p = await startSimulatorProcess('nomad', env);
  running.add(p);
  return p;
}

/** Kills every simulator process still running (afterEach/afterAll). */
export async function killSimProcesses(): Promise<void> {
  await Promise.all([...running].map((p) => p.kill()));
  running.clear();
}

/** The Nomad simulator seeded with the demo cluster (`variant`), on a free port. */
export async function startNomadProcess(variant: 'east' | 'west' = 'east'): Promise<SimProcess> {
  let current = await start({ NOMAD_SIM_VARIANT: variant });
  const url = nomadBanner(current.banner).url;
  const port = new URL(url).port;
  return {
    url,
    get child() {
      return current.child;
    },
    async kill() {
      await current.kill();
      running.delete(current);
    },
    async restart() {
      current = await start({ PORT: port, NOMAD_SIM_VARIANT: variant });
    },
  };
}
