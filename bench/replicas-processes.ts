/**
 * The processes and changes bench/replicas.ts and bench/fanout-replicas.ts work with: built gateways
 * (replicas on Redis, or one without), the lease holder among them, claims and releases of a
 * volume, and the kinds of backend request. Redis itself is test/support/redis.ts's redis-server.
 */
import type { ChildProcess } from 'node:child_process';
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

export interface Gateway {
  child: ChildProcess;
  http: string;
  ws: string;
}

/** How {@link gateway} starts one. */
export interface GatewayOptions {
  /** Pins it (a taskset CPU list, e.g. "0"). @default unpinned */
  cpus?: string;
  /** Its LIVE_LEASE_TTL_MS. @default REPLICAS_LEASE_TTL_MS, else the gateway's (10 s) */
  leaseTtlMs?: string;
  /** More environment. @default none */
  env?: Record<string, string>;
}

/**
 * A built gateway watching the simulated Nomad `bench` at `simUrl`, caps lifted, on `redis` (a
 * `redis://` URL, the environment of another form such as `{ REDIS_CLUSTER_NODES }`, or null for none).
 */
export async function gateway(
  simUrl: string,
  redis: string | Record<string, string> | null,
  o: GatewayOptions = {},
): Promise<Gateway> {
  const ttl = o.leaseTtlMs ?? process.env.REPLICAS_LEASE_TTL_MS;
  const { child, match } = await startBuiltGateway(
    {
      ...UNCAPPED,
      ...watchedNomad(simUrl),
      HOST: '127.0.0.1',
      PORT: '0',
      LOG_LEVEL: 'warn',
      ...(typeof redis === 'string' ? { REDIS_URL: redis } : (redis ?? {})),
      ...(ttl ? { LIVE_LEASE_TTL_MS: ttl } : {}),
      ...o.env,
    },
    /ready at (\S+)/,
    [],
    o.cpus,
  );
  const http = match[1]!.replace('localhost', '127.0.0.1');
  return { child, http, ws: wsUrlOf(http) };
}

/** /readyz's body. */
async function readyz(g: Gateway): Promise<any> {
  return (await request(new URL('/readyz', g.http))).body.json();
}

/**
 * Waits until every gateway serves the backend's live path: its watcher (the holder's, on a
 * follower) streaming, and on Redis this replica's view complete.
 */
export async function current(gws: readonly Gateway[], withRedis: boolean): Promise<void> {
  for (const end = Date.now() + 120_000; Date.now() < end; await sleep(100)) {
    const bodies = await Promise.all(gws.map(readyz));
    if (
      bodies.every(
        (b) =>
          b.watchers?.[0]?.watcher?.state === 'STREAMING' && (!withRedis || b.replication?.backends?.[0]?.viewComplete),
      )
    )
      return;
  }
  throw new Error('the gateways did not all serve the live path within 120 s');
}

export async function roles(gws: readonly Gateway[]): Promise<string[]> {
  return Promise.all(
    gws.map(async (g) => {
      const body = await readyz(g);
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
