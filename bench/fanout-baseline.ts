/**
 * The parent's side of the fan-out baseline (bench/fanout-baseline-server.ts, a plain `ws` server
 * in its own process): starting it, and posting it an event made from a frame the gateway sent.
 */
import { execFileSync } from 'node:child_process';
import { request } from 'undici';
import { canPin, start } from './processes';

/** Placeholder in a posted payload for the instant the baseline's fan-out starts. */
export const OBSERVED_AT = '%OBSERVED_AT%';

/** A started baseline server. */
export interface Baseline {
  /** Its processes (one, or the primary and its writers). */
  pids: number[];
  /** Its graphql-ws URL. */
  ws: string;
  /** Writes one event to every subscriber; answers the server's own write-loop figures. */
  event(payload: string): Promise<{ sockets: number; loopMs: number }>;
  stop(): Promise<void>;
}

/**
 * @param writers processes writing to the sockets (BASELINE_WRITERS)
 * @param nodeArgs e.g. `--cpu-prof` (FANOUT_PROFILE)
 * @param cpus pins the writers, one taskset CPU list each (with one writer, the server; with
 *   several, each writer once started, its threads included; the relaying primary stays unpinned). @default unpinned
 */
export async function startBaseline(writers = 1, nodeArgs: string[] = [], cpus: string[] = []): Promise<Baseline> {
  const b = await start(
    ['bench/fanout-baseline-server.ts'],
    { BASELINE_WRITERS: String(writers) },
    /BASELINE_URL=(\S+) CONTROL=(\S+) PIDS=(\S+)/,
    nodeArgs,
    writers <= 1 ? cpus[0] : undefined,
  );
  const url = b.match[2]!;
  const pids = b.match[3]!.split(',').map(Number);
  if (writers > 1 && canPin)
    pids.slice(1).forEach((pid, i) => {
      if (cpus[i]) execFileSync('taskset', ['-a', '-p', '-c', cpus[i], String(pid)], { stdio: 'ignore' });
    });
  return {
    pids,
    ws: b.match[1]!,
    async event(payload) {
      const res = await request(`${url}/event`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ payload }),
      });
      return (await res.body.json()) as { sockets: number; loopMs: number };
    },
    async stop() {
      const exited = new Promise((r) => b.child.once('exit', r));
      b.child.kill('SIGTERM');
      await exited;
    },
  };
}

/**
 * The payload of event `e` for the baseline, from the text of a `next` frame the gateway sent for
 * a claim: the same bytes but for the cursor (made distinct per event, same length) and
 * `observedAt` (stamped by the baseline when it starts writing).
 */
export function baselinePayload(gatewayFrame: string, e: number): string {
  const m = JSON.parse(gatewayFrame) as { payload: { data: Record<string, { cursor: string; observedAt: string }> } };
  const event = Object.values(m.payload.data)[0]!;
  const tag = `b${e}`;
  event.cursor = event.cursor.length > tag.length ? event.cursor.slice(0, event.cursor.length - tag.length) + tag : tag;
  // The server puts an ISO instant in its place, the same length as the gateway's.
  event.observedAt = OBSERVED_AT;
  return JSON.stringify(m.payload);
}
