/** graphql-ws tests' harness: a real gateway (startGateway) with a fixture hub, and a raw-frame client (the `ws` package). */
import WebSocket from 'ws';
import { startGateway, type RunningGateway } from '../../server/app';
import { createRegistry } from '../../server/backends';
import type { HttpEdgeOptions } from '../../server/http/config';
import type { LimitsConfig } from '../../server/limits';
import { createLogger } from '../../server/logger';
import { GatewayMetrics } from '../../server/metrics';
import type { WsOptions } from '../../server/ws';
import { FixtureLiveHub } from '../support/fixture-live-hub';
import { disposeAll, MGMT, startNomad } from '../support/harness';

export { MGMT };

export interface WsGateway {
  gateway: RunningGateway;
  hub: FixtureLiveHub;
  wsUrl: string;
  metrics(): Promise<string>;
}

const running: Array<() => Promise<void>> = [];

export async function stopAll(): Promise<void> {
  while (running.length > 0) await running.pop()!();
  await disposeAll();
}

/** A gateway over one Nomad simulator (backend id `east`), with a fixture hub unless `hub: null`. */
export async function startWsGateway(o: { ws?: WsOptions; limits?: Partial<LimitsConfig>; http?: HttpEdgeOptions; hub?: FixtureLiveHub | null } = {}): Promise<WsGateway> {
  const sim = await startNomad();
  const registry = createRegistry([{ id: 'east', kind: 'nomad', url: sim.url, timeoutMs: 5_000, maxConnections: 8, readRetries: 0 }]);
  const hub = o.hub === null ? undefined : (o.hub ?? new FixtureLiveHub());
  const metrics = new GatewayMetrics({ processMetrics: false });
  const gateway = await startGateway({
    config: { port: 0, host: '127.0.0.1', maxConcurrentReads: 8, maxBodyBytes: 1_048_576, shutdownGraceMs: 2_000, http: o.http, limits: o.limits, ws: o.ws },
    registry,
    logger: createLogger('silent'),
    metrics,
    live: hub ?? false,
  });
  let stopped = false;
  const stop = async (): Promise<void> => {
    if (stopped) return;
    stopped = true;
    await gateway.stop();
  };
  running.push(stop);
  const wrapped: RunningGateway = { ...gateway, stop };
  return {
    gateway: wrapped,
    hub: hub ?? new FixtureLiveHub(),
    wsUrl: gateway.url.replace(/^http/, 'ws'),
    metrics: async () => (await fetch(gateway.url.replace('/graphql', '/metrics'))).text(),
  };
}

export interface RawClient {
  ws: WebSocket;
  /** Resolves with the next message (parsed), in order. */
  next(timeoutMs?: number): Promise<any>;
  /** The next raw text frame. */
  nextRaw(timeoutMs?: number): Promise<string>;
  send(msg: unknown): void;
  closed: Promise<{ code: number; reason: string }>;
}

/** Opens a socket with `graphql-transport-ws` (or `protocol`), resolving once open. */
export async function rawClient(url: string, o: { protocol?: string | null; headers?: Record<string, string>; origin?: string; autoPong?: boolean } = {}): Promise<RawClient> {
  const protocol = o.protocol === undefined ? 'graphql-transport-ws' : o.protocol;
  const ws = new WebSocket(url, protocol === null ? [] : [protocol], { headers: o.headers, origin: o.origin, autoPong: o.autoPong ?? true });
  const frames: string[] = [];
  const waiters: Array<(f: string) => void> = [];
  ws.on('message', (d) => {
    const f = String(d);
    const w = waiters.shift();
    if (w) w(f);
    else frames.push(f);
  });
  const closed = new Promise<{ code: number; reason: string }>((r) => ws.once('close', (code, reason) => r({ code, reason: reason.toString() })));
  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('error', reject);
    ws.once('unexpected-response', (_req, res) => reject(Object.assign(new Error(`HTTP ${res.statusCode}`), { status: res.statusCode })));
  });
  const nextRaw = (timeoutMs = 10_000): Promise<string> => {
    const f = frames.shift();
    if (f !== undefined) return Promise.resolve(f);
    return new Promise((resolve, reject) => {
      const t = setTimeout(() => reject(new Error('no message in time')), timeoutMs);
      waiters.push((x) => {
        clearTimeout(t);
        resolve(x);
      });
    });
  };
  return { ws, nextRaw, next: async (t) => JSON.parse(await nextRaw(t)), send: (m) => ws.send(typeof m === 'string' ? m : JSON.stringify(m)), closed };
}

/** A socket past `connection_init`/`connection_ack`. */
export async function ackedClient(url: string, payload: Record<string, unknown> = { 'X-Nomad-Token': MGMT }): Promise<RawClient> {
  const c = await rawClient(url);
  c.send({ type: 'connection_init', payload });
  const ack = await c.next();
  if (ack.type !== 'connection_ack') throw new Error(`expected connection_ack, got ${JSON.stringify(ack)}`);
  return c;
}

/** The status an upgrade is refused with (or 101 when it is accepted). */
export async function upgradeStatus(url: string, o: { headers?: Record<string, string>; origin?: string } = {}): Promise<{ status: number; body: string }> {
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

/** Polls `check` until it is true (generous deadline: the suite runs in parallel on 2 cores). */
export async function waitFor(check: () => boolean | Promise<boolean>, what: string, timeoutMs = 15_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

export const OP_SUB = 'subscription($id: ID!) { operationUpdated(id: $id) { state backendStatus } }';
