/**
 * R4 and R5 of docs/reliability.md: a hung backend. The demo's simulators run inside the gateway
 * process and cannot be stopped, so this starts its own: a standalone Nomad simulator child
 * process and a gateway child process pointed at it (default settings: 10 s call deadline,
 * breaker 5 failures in a row, 5 s open), then SIGSTOPs the simulator and measures what callers,
 * the watcher and /readyz get. Five client calls in flight open the breaker, as traffic would.
 *
 * {@link replayLongStop} (R20) stops it longer than the breaker's open time, with one caller
 * asking all along, and measures how the gateway comes back after SIGCONT.
 *
 * Meant for `npm run attacks` (scripts/replay-attacks.ts); needs nothing running.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { nomadBanner, startSimulatorProcess } from '../../simulators/common/child';

const ROOT = join(__dirname, '..', '..');
const READ = JSON.stringify({
  query: '{ volumeByNativeId(backend: "east", namespace: "default", nativeId: "r4-probe") { id } }',
});

/** Starts `server/main.ts` with `env` and resolves with its GraphQL URL once it serves. */
function startGateway(env: Record<string, string>): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'server/main.ts'], {
    cwd: ROOT,
    env: { ...process.env, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  return new Promise((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => (child.kill('SIGKILL'), reject(new Error(`gateway did not start: ${out}`))), 60_000);
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    child.once('exit', (code) => (clearTimeout(timer), reject(new Error(`gateway exited with ${code}: ${out}`))));
    child.stdout.on('data', (d: Buffer) => {
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

/** Waits `ms` milliseconds. */
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** One R4 world: a Nomad simulator and a gateway child process with default settings, and how to ask them. */
interface World {
  sim: Awaited<ReturnType<typeof startSimulatorProcess>>;
  gateway: ChildProcess;
  call: () => Promise<{ ms: number; code: string; retryAfter?: number }>;
  readyz: () => Promise<{ ms: number; status: number; body: any }>;
  /** Polls /readyz every 100 ms until `check` holds; the time it took, ms. */
  waitFor: (what: string, check: (body: any) => boolean, ms: number) => Promise<number>;
}

const east = (body: any): any => body.backends.find((b: any) => b.id === 'east');

async function startWorld(): Promise<World> {
  const sim = await startSimulatorProcess('nomad');
  try {
    const { url: nomadUrl, managementToken } = nomadBanner(sim.banner);
    const gw = await startGateway({
      GATEWAY_BACKENDS: `east=nomad@${nomadUrl}`,
      GATEWAY_BACKEND_EAST_TOKEN: managementToken,
    });
    const root = gw.url.replace(/\/graphql$/, '');
    const headers = { 'content-type': 'application/json', 'x-nomad-token': managementToken };
    const readyz = async (): Promise<{ ms: number; status: number; body: any }> => {
      const started = performance.now();
      const res = await fetch(`${root}/readyz`, { signal: AbortSignal.timeout(120_000) });
      const body = await res.json();
      return { ms: performance.now() - started, status: res.status, body };
    };
    return {
      sim,
      gateway: gw.child,
      readyz,
      async call() {
        const started = performance.now();
        const res = await fetch(gw.url, { method: 'POST', headers, body: READ, signal: AbortSignal.timeout(120_000) });
        const body = (await res.json()) as {
          errors?: Array<{ extensions?: { code?: string; retryAfterSeconds?: number } }>;
        };
        const ext = body.errors?.[0]?.extensions;
        return { ms: performance.now() - started, code: ext?.code ?? 'data', retryAfter: ext?.retryAfterSeconds };
      },
      async waitFor(what, check, ms) {
        const started = performance.now();
        for (;;) {
          if (check((await readyz()).body)) return performance.now() - started;
          if (performance.now() - started > ms) throw new Error(`R4: timed out waiting for ${what}`);
          await sleep(100);
        }
      },
    };
  } catch (err) {
    await sim.close();
    throw err;
  }
}

async function stopWorld(w: World | undefined): Promise<void> {
  if (!w) return;
  await stopProcess(w.gateway);
  await w.sim.close();
}

/** How long R20 stops the simulator: longer than the breaker's open time (5 s) and the watcher's heartbeat allowance (45 s). */
const LONG_STOP_MS = 60_000;
/** How long R20 waits for the watcher's event stream after SIGCONT before it gives up. */
const STREAM_WAIT_MS = 120_000;

/**
 * Replays R20: the simulator stopped for {@link LONG_STOP_MS} while one caller asks every second
 * (five more in flight at the stop open the breaker), then continued. Returns table rows: the
 * slowest call while the breaker was not closed, and the times from SIGCONT to the breaker's
 * CLOSED and to the watcher's STREAMING on the event stream.
 */
export async function replayLongStop(): Promise<string[]> {
  let w: World | undefined;
  try {
    w = await startWorld();
    const world = w;
    await world.waitFor('the watcher streaming', (b) => east(b).watcher?.state === 'STREAMING', 60_000);
    world.sim.pause();
    const stoppedAt = performance.now();
    // The breaker's state as /readyz shows it, watched every 100 ms until it closes after SIGCONT.
    let breakerState = 'CLOSED';
    let watching = true;
    const watch = (async () => {
      while (watching) {
        breakerState = east((await world.readyz()).body).breakers[0]?.state ?? 'CLOSED';
        await sleep(100);
      }
    })();
    const opening = Promise.all([1, 2, 3, 4, 5].map(() => world.call()));
    // One caller all along: what a call costs while the breaker is not closed.
    const whileNotClosed: Array<{ ms: number; code: string }> = [];
    let asking = true;
    const caller = (async () => {
      while (asking) {
        const stateAtStart = breakerState;
        const c = await world.call();
        if (stateAtStart !== 'CLOSED' && breakerState !== 'CLOSED') whileNotClosed.push(c);
        await sleep(1000);
      }
    })();
    await opening;
    await sleep(Math.max(0, LONG_STOP_MS - (performance.now() - stoppedAt)));
    world.sim.resume();
    const closedMs = await world.waitFor(
      'the breaker closed',
      (b) => east(b).breakers.every((s: any) => s.state === 'CLOSED'),
      180_000,
    );
    asking = false;
    await caller;
    let streamingMs: number | null = null;
    try {
      streamingMs = await world.waitFor(
        'the watcher on the event stream',
        (b) => east(b).watcher?.state === 'STREAMING' && east(b).watcher?.source === 'EVENT_STREAM',
        STREAM_WAIT_MS,
      );
    } catch {
      streamingMs = null;
    }
    const watcher = east((await world.readyz()).body).watcher;
    watching = false;
    await watch;
    const slowest = whileNotClosed.reduce((m, c) => Math.max(m, c.ms), 0);
    const codes = [...new Set(whileNotClosed.map((c) => c.code))].join(', ');
    return [
      `| R20: nomad stopped (SIGSTOP) for ${LONG_STOP_MS / 1000} s, default settings, one caller every second | result |`,
      '|---|---|',
      `| calls while the breaker was not closed | ${whileNotClosed.length}, the slowest ${slowest.toFixed(0)} ms, ${codes || '-'} |`,
      `| from SIGCONT to breaker CLOSED | ${(closedMs / 1000).toFixed(1)} s |`,
      `| from SIGCONT to the watcher STREAMING on the event stream | ${streamingMs === null ? `not within ${STREAM_WAIT_MS / 1000} s (then ${watcher?.state} on ${watcher?.source})` : `${((streamingMs + closedMs) / 1000).toFixed(1)} s`} |`,
    ];
  } finally {
    await stopWorld(w);
  }
}

/**
 * Replays R4/R5 and returns the rows of a Markdown table (header first), ready to print:
 * calls before and while the breaker is open, the time to DEGRADED, /readyz while stopped, and
 * the time to recover after SIGCONT.
 */
export async function replayHungBackend(): Promise<string[]> {
  let w: World | undefined;
  try {
    w = await startWorld();
    const { sim, call, readyz, waitFor } = w;
    await waitFor('the watcher streaming', (b) => east(b).watcher?.state === 'STREAMING', 60_000);
    const healthy = await call();

    sim.pause();
    const stoppedAt = performance.now();
    // Watched from the stop on, while five callers are in flight: each waits the call deadline,
    // and together they open the breaker.
    const degraded = waitFor('DEGRADED', (b) => east(b).watcher?.state === 'DEGRADED', 120_000).then(
      () => performance.now() - stoppedAt,
    );
    const first = await Promise.all([1, 2, 3, 4, 5].map(() => call()));
    const sinceStop = await degraded;
    await waitFor('the breaker open', (b) => east(b).breakers.some((s: any) => s.state === 'OPEN'), 60_000);
    const open = await call();
    const ready = await readyz();

    sim.resume();
    const resumedAt = performance.now();
    await waitFor(
      'the breaker closed and the watcher streaming',
      (b) => east(b).breakers.every((s: any) => s.state === 'CLOSED') && east(b).watcher?.state === 'STREAMING',
      180_000,
    );
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
    await stopWorld(w);
  }
}
