/**
 * The processes and changes bench/replicas.ts works with: a redis-server, built gateways on it, the
 * lease holder among them, claims and releases of a volume, and the kinds of backend request.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer, type AddressInfo } from 'node:net';
import { Redis } from 'ioredis';
import { request } from 'undici';
import { UNCAPPED, watchedNomad } from './constants';
import { startBuiltGateway, wsUrlOf } from './processes';

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

export async function post(url: string, body: unknown): Promise<unknown> {
  const res = await request(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const text = await res.body.text();
  return text ? JSON.parse(text) : null;
}

async function freePort(): Promise<number> {
  const srv = createServer();
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', () => r()));
  const port = (srv.address() as AddressInfo).port;
  await new Promise<void>((r) => srv.close(() => r()));
  return port;
}

/** A redis-server without persistence on a free loopback port. */
export async function startRedis(): Promise<{ url: string; child: ChildProcess }> {
  const port = await freePort();
  const child = spawn(
    '/usr/bin/redis-server',
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
    {
      stdio: 'ignore',
    },
  );
  const url = `redis://127.0.0.1:${port}`;
  // Retried until the server listens (its first connections are refused).
  const probe = new Redis(url, { maxRetriesPerRequest: null, retryStrategy: () => 50 });
  probe.on('error', () => undefined);
  await probe.ping();
  probe.disconnect();
  return { url, child };
}

export interface Gateway {
  child: ChildProcess;
  http: string;
  ws: string;
}

/**
 * A built gateway over the simulated Nomad at `simUrl`, on `redis` (a `redis://` URL, the
 * environment of another form such as `{ REDIS_CLUSTER_NODES }`, or null for none), with `env` added.
 */
export async function gateway(
  simUrl: string,
  redis: string | Record<string, string> | null,
  env: Record<string, string> = {},
): Promise<Gateway> {
  const { child, match } = await startBuiltGateway(
    {
      ...UNCAPPED,
      ...watchedNomad(simUrl),
      HOST: '127.0.0.1',
      PORT: '0',
      LOG_LEVEL: 'warn',
      ...(typeof redis === 'string' ? { REDIS_URL: redis } : (redis ?? {})),
      ...(process.env.REPLICAS_LEASE_TTL_MS ? { LIVE_LEASE_TTL_MS: process.env.REPLICAS_LEASE_TTL_MS } : {}),
      ...env,
    },
    /ready at (\S+)/,
  );
  const http = match[1]!.replace('localhost', '127.0.0.1');
  return { child, http, ws: wsUrlOf(http) };
}

export async function roles(gws: readonly Gateway[]): Promise<string[]> {
  return Promise.all(
    gws.map(async (g) => {
      const body = (await (await request(new URL('/readyz', g.http))).body.json()) as any;
      return (body.replication?.backends?.[0]?.role as string | undefined) ?? 'NONE';
    }),
  );
}

/** Waits until exactly one replica holds the lease; answers the holder's index. */
export async function holder(gws: readonly Gateway[]): Promise<number> {
  for (const end = Date.now() + 60_000; Date.now() < end; await sleep(100)) {
    const r = await roles(gws);
    if (r.filter((x) => x === 'HOLDER').length === 1) return r.indexOf('HOLDER');
  }
  throw new Error('no single lease holder within 60 s');
}

/**
 * Claims and releases of one volume in turn (an allocation placed, then stopped): each step is one
 * change. `finish` releases a claim left open, so the next run can claim the volume again.
 */
export function churn(
  simUrl: string,
  volumeId: string,
  prefix: string,
): { step(): Promise<void>; finish(): Promise<void> } {
  let i = 0;
  let open: string | null = null;
  const release = async (): Promise<void> => {
    if (open)
      await post(`${simUrl}/_sim/allocations/${open}/status`, { clientStatus: 'complete', desiredStatus: 'stop' });
    open = null;
  };
  return {
    step: async () => {
      if (open) return release();
      open = `${prefix}-${i++}`;
      await post(`${simUrl}/_sim/allocations`, {
        id: open,
        jobId: open,
        nodeId: 'node-bench-1',
        volumes: [{ volumeId, mode: 'write', accessMode: 'single-node-writer', attachmentMode: 'file-system' }],
      });
    },
    finish: release,
  };
}

const KINDS: Array<[string, (path: string) => boolean]> = [
  ['event stream', (p) => p.startsWith('/v1/event/stream')],
  ['volume lists', (p) => p === '/v1/volumes'],
  ['volume reads', (p) => p.startsWith('/v1/volume/csi/')],
  ['token self-reads', (p) => p === '/v1/acl/token/self'],
  ['readiness probes', (p) => p.startsWith('/v1/status/') || p.startsWith('/v1/agent/')],
];

export const kindOf = (path: string): string => KINDS.find(([, m]) => m(path))?.[0] ?? 'other';
