/**
 * graphql-ws tests' harness: a real gateway (startGateway) over a Nomad simulator with a service
 * token, so the gateway's own live hub runs with the backend's real watcher (event stream), and a
 * raw-frame client (the `ws` package). Changes are the simulator's own: allocations that claim
 * volumes and release them, volumes that appear.
 */
import WebSocket from 'ws';
import { startGateway, type RunningGateway } from '../../server/app';
import { createRegistry } from '../../server/backends';
import type { HttpEdgeOptions } from '../../server/http/config';
import type { LimitsConfig } from '../../server/limits';
import type { LiveConfig } from '../../server/live-config';
import { createLogger } from '../../server/logger';
import { GatewayMetrics } from '../../server/metrics';
import type { WsOptions } from '../../server/ws';
import type { NomadSimulator } from '../../simulators/nomad';
import { disposeAll, MGMT, seedVolumes, startNomad } from '../support/harness';
import { until as waitFor } from '../support/until';
import { messageText } from '../../server/ws/message-text';

export { MGMT, seedVolumes, waitFor };

/** Every volume change, its type and volume id: a long-lived subscription any test can hold. */
export const SUB = 'subscription { volumeChanged { type volumeId } }';
/** A subscription with a required variable (for variable errors). */
export const OP_SUB = 'subscription($id: ID!) { operationUpdated(id: $id) { state backendStatus } }';

export interface WsGateway {
  gateway: RunningGateway;
  sim: NomadSimulator;
  wsUrl: string;
  /** `GET /metrics`. */
  metrics(): Promise<string>;
  /** The same registry read in process (works after `stop()` too). */
  scrape(): Promise<string>;
  /** Open subscriptions per root field: the live hub's count, as `gateway_ws_subscriptions` reports it. */
  subscriptions(): Promise<Record<string, number>>;
  /** Open subscriptions in all. */
  open(): Promise<number>;
  /** Waits until exactly `n` subscriptions are open. */
  waitOpen(n: number, what: string): Promise<void>;
}

const running: Array<() => Promise<void>> = [];

export async function stopAll(): Promise<void> {
  while (running.length > 0) await running.pop()!();
  await disposeAll();
}

/** One sample's value, or undefined when the metric has no such sample. */
export function sample(text: string, nameAndLabels: string): number | undefined {
  for (const line of text.split('\n')) {
    if (line.startsWith(`${nameAndLabels} `)) return Number(line.slice(nameAndLabels.length + 1));
  }
  return undefined;
}

/**
 * A gateway over one Nomad simulator (backend id `east`, service token MGMT) with volumes
 * `vol-000`…`vol-003` in `default` (plus what `seed` adds), started once the simulator has them,
 * and returned once the watcher's first full read is done (later changes are reported).
 * `live: false` runs it without a hub.
 */
export async function startWsGateway(
  o: {
    ws?: WsOptions;
    limits?: Partial<LimitsConfig>;
    http?: HttpEdgeOptions;
    live?: Partial<LiveConfig> | false;
    seed?: (sim: NomadSimulator) => void;
  } = {},
): Promise<WsGateway> {
  const sim = await startNomad();
  seedVolumes(sim, 4);
  o.seed?.(sim);
  const registry = createRegistry([
    { id: 'east', kind: 'nomad', url: sim.url, token: MGMT, timeoutMs: 5_000, maxConnections: 8, readRetries: 0 },
  ]);
  const metrics = new GatewayMetrics({ processMetrics: false });
  const gateway = await startGateway({
    config: {
      port: 0,
      host: '127.0.0.1',
      maxConcurrentReads: 8,
      maxBodyBytes: 1_048_576,
      shutdownGraceMs: 2_000,
      http: o.http,
      limits: o.limits,
      ws: o.ws,
      live: o.live || undefined,
    },
    registry,
    logger: createLogger('silent'),
    metrics,
    // No background readiness probe: its calls would show in the request logs and metrics tests count.
    readinessProbe: false,
    ...(o.live === false ? { live: false as const } : {}),
  });
  let stopped = false;
  const stop = async (): Promise<void> => {
    if (stopped) return;
    stopped = true;
    await gateway.stop();
  };
  running.push(stop);
  const scrape = (): Promise<string> => metrics.registry.metrics();
  const subscriptions = async (): Promise<Record<string, number>> => {
    const out: Record<string, number> = {};
    for (const m of (await scrape()).matchAll(/^gateway_ws_subscriptions\{field="(\w+)"\} (\d+)$/gm))
      out[m[1]!] = Number(m[2]);
    return out;
  };
  const open = async (): Promise<number> => Object.values(await subscriptions()).reduce((a, b) => a + b, 0);
  if (o.live !== false)
    await waitFor(
      async () => sample(await scrape(), 'gateway_live_watcher_lag_seconds{backend="east"}') !== undefined,
      "the watcher's first full read",
    );
  return {
    gateway: { ...gateway, stop },
    sim,
    wsUrl: gateway.url.replace(/^http/, 'ws'),
    metrics: async () => (await fetch(gateway.url.replace('/graphql', '/metrics'))).text(),
    scrape,
    subscriptions,
    open,
    waitOpen: (n, what) => waitFor(async () => (await open()) === n, what),
  };
}

/** Claims `volumes` (in `default`) with a new running allocation on node-1111 (a writer, unless `reader`); returns its id. */
export function claim(sim: NomadSimulator, volumes: string[], jobId = 'job', reader = false): string {
  const mode = reader
    ? { mode: 'read' as const, accessMode: 'multi-node-reader-only' }
    : { mode: 'write' as const, accessMode: 'single-node-writer' };
  return sim.placeAllocation({
    jobId,
    nodeId: 'node-1111',
    volumes: volumes.map((volumeId) => ({ volumeId, ...mode, attachmentMode: 'file-system' })),
  });
}

/** The allocation completes: its claims are released. */
export function release(sim: NomadSimulator, allocId: string): void {
  sim.setAllocationStatus(allocId, { clientStatus: 'complete' });
}

export interface RawClient {
  ws: WebSocket;
  /** Resolves with the next message (parsed) that `match` accepts (default: any), in order. */
  next(timeoutMs?: number, match?: (m: any) => boolean): Promise<any>;
  /** The next message for subscription `id`. */
  nextFor(id: string, timeoutMs?: number): Promise<any>;
  /** The next raw text frame that `match` accepts (default: any). */
  nextRaw(timeoutMs?: number, match?: (f: string) => boolean): Promise<string>;
  send(msg: unknown): void;
  closed: Promise<{ code: number; reason: string }>;
}

/** Opens a socket with `graphql-transport-ws` (or `protocol`), resolving once open. */
export async function rawClient(
  url: string,
  o: { protocol?: string | null; headers?: Record<string, string>; origin?: string; autoPong?: boolean } = {},
): Promise<RawClient> {
  const protocol = o.protocol === undefined ? 'graphql-transport-ws' : o.protocol;
  const ws = new WebSocket(url, protocol === null ? [] : [protocol], {
    headers: o.headers,
    origin: o.origin,
    autoPong: o.autoPong ?? true,
  });
  const frames: string[] = [];
  const waiters: Array<{ match: (f: string) => boolean; take: (f: string) => void }> = [];
  ws.on('message', (d) => {
    const f = messageText(d);
    const i = waiters.findIndex((w) => w.match(f));
    if (i >= 0) waiters.splice(i, 1)[0]!.take(f);
    else frames.push(f);
  });
  const closed = new Promise<{ code: number; reason: string }>((r) =>
    ws.once('close', (code, reason) => r({ code, reason: reason.toString() })),
  );
  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('error', reject);
    ws.once('unexpected-response', (_req, res) =>
      reject(Object.assign(new Error(`HTTP ${res.statusCode}`), { status: res.statusCode })),
    );
  });
  const nextRaw = (timeoutMs = 15_000, match: (f: string) => boolean = () => true): Promise<string> => {
    const i = frames.findIndex(match);
    if (i >= 0) return Promise.resolve(frames.splice(i, 1)[0]!);
    return new Promise((resolve, reject) => {
      const w = {
        match,
        take: (x: string) => {
          clearTimeout(t);
          resolve(x);
        },
      };
      const t = setTimeout(() => {
        waiters.splice(waiters.indexOf(w), 1);
        reject(new Error('no message in time'));
      }, timeoutMs);
      waiters.push(w);
    });
  };
  const next = async (t?: number, match: (m: any) => boolean = () => true): Promise<any> =>
    JSON.parse(await nextRaw(t, (f) => match(JSON.parse(f))));
  return {
    ws,
    nextRaw,
    next,
    nextFor: (id, t) => next(t, (m) => m.id === id),
    send: (m) => ws.send(typeof m === 'string' ? m : JSON.stringify(m)),
    closed,
  };
}

/** A socket past `connection_init`/`connection_ack`. */
export async function ackedClient(
  url: string,
  payload: Record<string, unknown> = { 'X-Nomad-Token': MGMT },
): Promise<RawClient> {
  const c = await rawClient(url);
  c.send({ type: 'connection_init', payload });
  const ack = await c.next();
  if (ack.type !== 'connection_ack') throw new Error(`expected connection_ack, got ${JSON.stringify(ack)}`);
  return c;
}

/** Subscribes with `query` and waits for the hub's first event, SUBSCRIBED (the stream is open). */
export async function subscribed(
  c: RawClient,
  id: string,
  query = SUB,
  variables?: Record<string, unknown>,
  field = 'volumeChanged',
): Promise<any> {
  c.send({ id, type: 'subscribe', payload: { query, variables } });
  const m = await c.nextFor(id);
  if (m.type !== 'next' || m.payload.data?.[field]?.type !== 'SUBSCRIBED')
    throw new Error(`expected SUBSCRIBED for ${id}, got ${JSON.stringify(m)}`);
  return m.payload.data[field];
}

/** Waits for the next event of subscription `id` whose type is `type` (skipping others); returns its data. */
export async function eventOf(c: RawClient, id: string, type: string, field = 'volumeChanged'): Promise<any> {
  const m = await c.next(15_000, (x) => x.id === id && x.type === 'next' && x.payload.data?.[field]?.type === type);
  return m.payload.data[field];
}

/** The status an upgrade is refused with (or 101 when it is accepted). */
export async function upgradeStatus(
  url: string,
  o: { headers?: Record<string, string>; origin?: string } = {},
): Promise<{ status: number; body: string }> {
  const ws = new WebSocket(url, ['graphql-transport-ws'], { headers: o.headers, origin: o.origin });
  return new Promise((resolve, reject) => {
    ws.once('open', () => {
      ws.close();
      resolve({ status: 101, body: '' });
    });
    ws.once('unexpected-response', (_req, res) => {
      let body = '';
      res.on('data', (d: Buffer) => (body += d.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    ws.once('error', (e) => (ws.readyState === WebSocket.CLOSED ? undefined : reject(e)));
  });
}
