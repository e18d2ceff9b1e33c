/**
 * A real Sentinel deployment for the Redis failover tests: a primary and one replica
 * (redis-server, no persistence) watched by three sentinels (Debian package `redis-sentinel`,
 * installed by scripts/system-deps.sh), all on free loopback ports, with short failure timeouts
 * so that a failover takes a few seconds. `stopRedisServers()` does not stop these:
 * call `set.stop()` (afterAll); a test process that dies stops them too.
 */
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { freePort, REDIS_SENTINEL, spawnRedis } from './redis';
import { until } from './until';

/** One process of the set. */
export interface SentinelSetNode {
  port: number;
  process: ChildProcess;
  /** SIGKILL; resolves once it is gone. */
  kill(): Promise<void>;
}

export interface SentinelSetUnderTest {
  masterName: string;
  /** The two data nodes: [0] starts as the primary, [1] as its replica. */
  nodes: SentinelSetNode[];
  sentinels: SentinelSetNode[];
  /** The gateway's environment for this set (`REDIS_SENTINELS`, `REDIS_SENTINEL_MASTER`). */
  env: Record<string, string>;
  /** The port of the primary the sentinels name now. */
  primaryPort(): Promise<number>;
  /** Starts a replica of the current primary when none lives; resolves once every sentinel knows the replicas. */
  ensureReplica(): Promise<void>;
  /**
   * Stops every replica's replication (its AUTH to the primary fails from then on, as if the link
   * were cut) while each still reports that primary: what the primary takes after is a tail that a
   * failover loses.
   */
  cutOffReplicas(): Promise<void>;
  /** Waits until the sentinels name a primary other than `port` and it answers as master. */
  failedOver(fromPort: number, timeoutMs?: number): Promise<number>;
  stop(): Promise<void>;
}

export interface SentinelSetOptions {
  /** `sentinel down-after-milliseconds`. @default 1000 */
  downAfterMs?: number;
  /** `sentinel failover-timeout`. @default 5000 */
  failoverTimeoutMs?: number;
  /** The data nodes' `requirepass` (and `masterauth`; the sentinels' `auth-pass`). @default none */
  password?: string;
  /** The sentinels' own `requirepass` (and `sentinel-pass` between them). @default none */
  sentinelPassword?: string;
  /**
   * TLS only, on every process (plain ports closed; replication and the sentinels' links over TLS;
   * no client certificates asked for): PEM file paths of the server certificate, its key and the CA
   * that signed it. @default plain TCP
   */
  tls?: { cert: string; key: string; ca: string };
}

/** How to reach one process of the set. */
interface Reach {
  password?: string;
  ca?: Buffer;
}

const all = new Set<SentinelSetNode>();
process.once('exit', () => {
  for (const n of all) n.process.kill('SIGKILL');
});

/** The arguments that make a process TLS-only on `port`. */
const tlsArgs = (port: number, t: NonNullable<SentinelSetOptions['tls']>): string[] => [
  '--port',
  '0',
  '--tls-port',
  String(port),
  '--tls-cert-file',
  t.cert,
  '--tls-key-file',
  t.key,
  '--tls-ca-cert-file',
  t.ca,
  '--tls-auth-clients',
  'no',
  '--tls-replication',
  'yes',
];

async function node(
  port: number,
  o: { args?: (port: number) => string[]; sentinel?: boolean; password?: string },
): Promise<SentinelSetNode> {
  for (let attempt = 0; attempt < 5; attempt++) {
    const at = attempt === 0 ? port : await freePort();
    const started = await spawnRedis(at, o.password, { args: o.args?.(at) ?? [], sentinel: o.sentinel });
    if (!started) continue;
    const n: SentinelSetNode = {
      port: at,
      process: started.child,
      kill: async () => {
        all.delete(n);
        if (started.child.exitCode === null && started.child.signalCode === null) {
          started.child.kill('SIGKILL');
          await started.exited;
        }
      },
    };
    all.add(n);
    return n;
  }
  throw new Error('redis: no free port after 5 attempts');
}

/** Asks one process of the set; null when it does not answer. */
async function ask<T>(port: number, f: (r: Redis) => Promise<T>, reach: Reach = {}): Promise<T | null> {
  const r = new Redis({
    port,
    host: '127.0.0.1',
    ...(reach.password ? { password: reach.password } : {}),
    ...(reach.ca ? { tls: { ca: reach.ca } } : {}),
    lazyConnect: true,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
  });
  r.on('error', () => {});
  try {
    await r.connect();
    return await f(r);
  } catch {
    return null;
  } finally {
    r.disconnect();
  }
}

/** Starts a primary, its replica and three sentinels; resolves once every sentinel knows the replica and the other two. */
export async function startSentinelSet(o: SentinelSetOptions = {}): Promise<SentinelSetUnderTest> {
  const masterName = 'gateway';
  const dir = mkdtempSync(join(tmpdir(), 'vg-sentinel-'));
  const ca = o.tls ? readFileSync(o.tls.ca) : undefined;
  const data: Reach = { password: o.password, ca };
  const watching: Reach = { password: o.sentinelPassword, ca };
  const dataNode = async (replicaOf?: number): Promise<SentinelSetNode> =>
    node(await freePort(), {
      password: o.password,
      args: (port) => [
        ...(o.tls ? tlsArgs(port, o.tls) : []),
        ...(replicaOf !== undefined ? ['--replicaof', '127.0.0.1', String(replicaOf)] : []),
      ],
    });
  const synced = (n: SentinelSetNode, what: string): Promise<void> =>
    until(
      async () => (await ask(n.port, (r) => r.info('replication'), data))?.includes('master_link_status:up') ?? false,
      what,
      20_000,
    );
  const primary = await dataNode();
  const replica = await dataNode(primary.port);
  await synced(replica, 'the replica to sync');
  const sentinels: SentinelSetNode[] = [];
  for (let i = 0; i < 3; i++) {
    // Sentinel rewrites its config file, so each gets a file of its own.
    const conf = join(dir, `sentinel-${i}.conf`);
    writeFileSync(
      conf,
      [
        `sentinel monitor ${masterName} 127.0.0.1 ${primary.port} 2`,
        `sentinel down-after-milliseconds ${masterName} ${o.downAfterMs ?? 1000}`,
        `sentinel failover-timeout ${masterName} ${o.failoverTimeoutMs ?? 5000}`,
        `sentinel parallel-syncs ${masterName} 1`,
        ...(o.password ? [`sentinel auth-pass ${masterName} ${o.password}`] : []),
        ...(o.sentinelPassword
          ? [`requirepass ${o.sentinelPassword}`, `sentinel sentinel-pass ${o.sentinelPassword}`]
          : []),
        '',
      ].join('\n'),
    );
    sentinels.push(
      await node(await freePort(), { sentinel: true, args: (port) => [conf, ...(o.tls ? tlsArgs(port, o.tls) : [])] }),
    );
  }
  const primaryPort = async (): Promise<number> => {
    for (const s of sentinels) {
      const addr = await ask(s.port, (r) => r.call('SENTINEL', 'GET-MASTER-ADDR-BY-NAME', masterName), watching);
      if (Array.isArray(addr)) return Number(addr[1]);
    }
    throw new Error('no sentinel answered');
  };
  const knowEachOther = (replicas: number): Promise<void> =>
    until(
      async () => {
        const known = await Promise.all(
          sentinels.map((s) =>
            ask(
              s.port,
              async (r) => {
                const rs = (await r.call('SENTINEL', 'REPLICAS', masterName)) as string[][];
                const others = (await r.call('SENTINEL', 'SENTINELS', masterName)) as unknown[];
                const up = rs.filter((x) => !String(x[x.indexOf('flags') + 1]).includes('down'));
                return up.length === replicas && others.length === 2;
              },
              watching,
            ),
          ),
        );
        return known.every((k) => k === true);
      },
      `every sentinel to know ${replicas} replica(s) and the other sentinels`,
      30_000,
    );
  await knowEachOther(1);
  const alive = (): SentinelSetNode[] =>
    set.nodes.filter((x) => x.process.exitCode === null && x.process.signalCode === null);
  const set: SentinelSetUnderTest = {
    masterName,
    nodes: [primary, replica],
    sentinels,
    env: {
      REDIS_SENTINELS: sentinels.map((s) => `127.0.0.1:${s.port}`).join(','),
      REDIS_SENTINEL_MASTER: masterName,
      ...(o.password ? { REDIS_PASSWORD: o.password } : {}),
      ...(o.sentinelPassword ? { REDIS_SENTINEL_PASSWORD: o.sentinelPassword } : {}),
      ...(o.tls ? { REDIS_TLS: 'true', REDIS_SENTINEL_TLS: 'true', REDIS_TLS_CA_FILE: o.tls.ca } : {}),
    },
    primaryPort,
    async ensureReplica() {
      const at = await primaryPort();
      if (alive().some((x) => x.port !== at)) return;
      const r = await dataNode(at);
      set.nodes.push(r);
      await synced(r, 'the new replica to sync');
      // Forget what was (the dead node) and find the replicas again, now rather than in 10 s.
      await Promise.all(sentinels.map((x) => ask(x.port, (c) => c.call('SENTINEL', 'RESET', masterName), watching)));
      await knowEachOther(alive().length - 1);
    },
    async cutOffReplicas() {
      const at = await primaryPort();
      for (const r of alive().filter((x) => x.port !== at)) {
        await ask(
          r.port,
          async (c) => {
            await c.config('SET', 'masterauth', 'not-the-primary-s');
            await c.call('CLIENT', 'KILL', 'TYPE', 'master');
          },
          data,
        );
        await until(
          async () =>
            (await ask(r.port, (c) => c.info('replication'), data))?.includes('master_link_status:down') ?? false,
          'the replica to be cut off',
          10_000,
        );
      }
    },
    async failedOver(fromPort, timeoutMs = 30_000) {
      let now = fromPort;
      await until(
        async () => {
          now = await primaryPort().catch(() => fromPort);
          return (
            now !== fromPort &&
            ((await ask(now, async (r) => ((await r.call('ROLE')) as unknown[])[0], data)) ?? null) === 'master'
          );
        },
        () => `the sentinels to fail over from port ${fromPort} (they name ${now})`,
        timeoutMs,
      );
      return now;
    },
    async stop() {
      await Promise.all([...sentinels, primary, replica].map((n) => n.kill()));
      rmSync(dir, { recursive: true, force: true });
    },
  };
  return set;
}

export { REDIS_SENTINEL };
