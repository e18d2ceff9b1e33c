/**
 * R4 and R5 of docs/reliability.md: a hung backend. The demo's simulators run inside the gateway
 * process and cannot be stopped, so this starts its own: a standalone Nomad simulator child
 * process and a gateway child process pointed at it (default settings: 10 s call deadline,
 * breaker 5 failures in a row, 5 s open), then SIGSTOPs the simulator and measures what callers,
 * the watcher and /readyz get. Five client calls in flight open the breaker, as traffic would.
 *
 * Meant for `npm run attacks` (scripts/replay-attacks.ts); needs nothing running.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { nomadBanner, startSimulatorProcess } from '../../simulators/common/child';

const ROOT = join(__dirname, '..', '..');
const READ = JSON.stringify({ query: '{ volumeByNativeId(backend: "east", namespace: "default", nativeId: "r4-probe") { id } }' });

/** Starts `server/main.ts` with `env` and resolves with its GraphQL URL once it serves. */
function startGateway(env: Record<string, string>): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'server/main.ts'], { cwd: ROOT, env: { ...process.env, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'warn', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  return new Promise((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => (child.kill('SIGKILL'), reject(new Error(`gateway did not start: ${out}`))), 60_000);
    child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
    child.once('exit', (code) => (clearTimeout(timer), reject(new Error(`gateway exited with ${code}: ${out}`))));
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const m = /Volume gateway ready at (\S+)/.exec(out);
      if (!m) return;
      clearTimeout(timer);
      child.removeAllListeners('exit');
      resolve({ child, url: m[1]! });
    });
  });
}

async function stopProcess(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  const kill = setTimeout(() => child.kill('SIGKILL'), 15_000);
  child.kill('SIGTERM');
  await exited;
  clearTimeout(kill);
}

/**
 * Replays R4/R5 and returns the rows of a Markdown table (header first), ready to print:
 * calls before and while the breaker is open, the time to DEGRADED, /readyz while stopped, and
 * the time to recover after SIGCONT.
 */
export async function replayHungBackend(): Promise<string[]> {
  const sim = await startSimulatorProcess('nomad');
  let gateway: ChildProcess | undefined;
  try {
    const { url: nomadUrl, managementToken } = nomadBanner(sim.banner);
    const gw = await startGateway({ GATEWAY_BACKENDS: `east=nomad@${nomadUrl}`, GATEWAY_BACKEND_EAST_TOKEN: managementToken });
    gateway = gw.child;
    const root = gw.url.replace(/\/graphql$/, '');
    const headers = { 'content-type': 'application/json', 'x-nomad-token': managementToken };
    const call = async (): Promise<{ ms: number; code: string; retryAfter?: number }> => {
      const started = performance.now();
      const res = await fetch(gw.url, { method: 'POST', headers, body: READ, signal: AbortSignal.timeout(120_000) });
      const body = (await res.json()) as { errors?: Array<{ extensions?: { code?: string; retryAfterSeconds?: number } }> };
      const ext = body.errors?.[0]?.extensions;
      return { ms: performance.now() - started, code: ext?.code ?? 'data', retryAfter: ext?.retryAfterSeconds };
    };
    const readyz = async (): Promise<{ ms: number; status: number; body: any }> => {
      const started = performance.now();
      const res = await fetch(`${root}/readyz`, { signal: AbortSignal.timeout(120_000) });
      const body = await res.json();
      return { ms: performance.now() - started, status: res.status, body };
    };
    const east = (body: any): any => body.backends.find((b: any) => b.id === 'east');
    const waitFor = async (what: string, check: (body: any) => boolean, ms: number): Promise<number> => {
      const started = performance.now();
      for (;;) {
        if (check((await readyz()).body)) return performance.now() - started;
        if (performance.now() - started > ms) throw new Error(`R4: timed out waiting for ${what}`);
        await new Promise((r) => setTimeout(r, 100));
      }
    };

    await waitFor('the watcher streaming', (b) => east(b).watcher?.state === 'STREAMING', 60_000);
    const healthy = await call();

    sim.pause();
    const stoppedAt = performance.now();
    // Watched from the stop on, while five callers are in flight: each waits the call deadline,
    // and together they open the breaker.
    const degraded = waitFor('DEGRADED', (b) => east(b).watcher?.state === 'DEGRADED', 120_000).then(() => performance.now() - stoppedAt);
    const first = await Promise.all([1, 2, 3, 4, 5].map(() => call()));
    const sinceStop = await degraded;
    await waitFor('the breaker open', (b) => east(b).breakers.some((s: any) => s.state === 'OPEN'), 60_000);
    const open = await call();
    const ready = await readyz();

    sim.resume();
    const resumedAt = performance.now();
    await waitFor('the breaker closed and the watcher streaming', (b) => east(b).breakers.every((s: any) => s.state === 'CLOSED') && east(b).watcher?.state === 'STREAMING', 180_000);
    const recoveredMs = performance.now() - resumedAt;

    const slowest = Math.max(...first.map((c) => c.ms));
    return [
      '| R4/R5: nomad stopped (SIGSTOP), default settings | result |',
      '|---|---|',
      `| a call before the stop | ${healthy.ms.toFixed(0)} ms, ${healthy.code} |`,
      `| 5 calls in flight when it stopped (they open the breaker) | up to ${slowest.toFixed(0)} ms each, ${[...new Set(first.map((c) => c.code))].join(', ')} |`,
      `| a call while the breaker is open | ${open.ms.toFixed(0)} ms, ${open.code}, retryAfterSeconds ${open.retryAfter ?? '-'} |`,
      `| from SIGSTOP to the watcher's DEGRADED | ${(sinceStop / 1000).toFixed(1)} s (the calls above opened the breaker; without traffic: the 45 s heartbeat allowance) |`,
      `| /readyz while stopped | ${ready.ms.toFixed(0)} ms, HTTP ${ready.status}, east: breaker ${east(ready.body).breakers[0]?.state}, watcher ${east(ready.body).watcher?.state} |`,
      `| from SIGCONT to breaker CLOSED and watcher STREAMING | ${(recoveredMs / 1000).toFixed(1)} s |`,
    ];
  } finally {
    if (gateway) await stopProcess(gateway);
    await sim.close();
  }
}
