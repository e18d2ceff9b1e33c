/**
 * A real Redis Cluster for the high-availability tests (issue 30): redis-server nodes with
 * `--cluster-enabled yes` (each with its own temp dir and `nodes.conf`, loopback ports, no
 * persistence) joined with `redis-cli --cluster create … --cluster-yes`, waited on until every node
 * says `cluster_state:ok` and agrees on who serves every slot. Nodes are started through
 * ./redis.ts, so `stopRedisServers()` stops them too and removes their dirs.
 *
 * Helpers for the chaos tests: the slot of a key and the primary serving it, kill or pause a node,
 * and move one slot to another primary with the steps `redis-cli --cluster reshard` takes for each
 * slot (IMPORTING/MIGRATING, MIGRATE key by key, SETSLOT NODE): reshard itself cannot be told which
 * slot to move.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Redis } from 'ioredis';
import { freePort, startRedisServer, type RedisServerUnderTest } from './redis';
import { until } from './until';

export const REDIS_CLI = '/usr/bin/redis-cli';

/** One node of the Cluster. */
export interface ClusterNodeUnderTest extends RedisServerUnderTest {
  /** Its Cluster node id (`CLUSTER MYID`). */
  id: string;
  /** `127.0.0.1:<port>`. */
  address: string;
  /** SIGSTOP (it stops answering, as a hung host); {@link resume} undoes it. */
  pause(): void;
  resume(): void;
}

/** Options of {@link startRedisCluster}. */
export interface RedisClusterOptions {
  /** @default 3 (the fewest `redis-cli --cluster create` accepts) */
  primaries?: number;
  /** Replicas per primary (`--cluster-replicas`). @default 0 */
  replicas?: number;
  /** `cluster-node-timeout`: how long a node may not answer before it counts as failed. @default 2000 */
  nodeTimeoutMs?: number;
  /**
   * `cluster-require-full-coverage`: with yes (Redis's default) every slot is refused while one
   * slot has no primary. @default true
   */
  requireFullCoverage?: boolean;
  /** Every node's `requirepass` (and `masterauth`). @default none */
  password?: string;
  /**
   * TLS only (plain ports closed; the Cluster bus and replication over TLS too; no client
   * certificates asked for of clients): PEM file paths of the server certificate, its key, its CA,
   * and the certificate and key a node presents when it connects to another (the bus checks it
   * against the CA, and wants the `clientAuth` key usage). @default plain TCP
   */
  tls?: { cert: string; key: string; ca: string; clientCert: string; clientKey: string };
}

/** How the helpers reach a node. */
interface Reach {
  password?: string;
  ca?: Buffer;
}

/** How {@link RedisClusterUnderTest.moveSlot} moves the keys. */
export interface SlotMove {
  /** Pause after each key, in ms. @default 0 */
  pauseMs?: number;
  /**
   * Keys to move before the others (as `CLUSTER GETKEYSINSLOT` orders them), e.g. one that a
   * script reads with others, so that the script meets its keys split over both nodes. @default none
   */
  first?: string[];
}

/** A running Cluster. */
export interface RedisClusterUnderTest {
  nodes: ClusterNodeUnderTest[];
  /** The seed list for `REDIS_CLUSTER_NODES`: every node's `127.0.0.1:<port>`, comma-separated. */
  seeds: string;
  /** The gateway's environment for this Cluster: `REDIS_CLUSTER_NODES`, and its password and TLS settings. */
  env: Record<string, string>;
  /** `CLUSTER KEYSLOT key`. */
  slotOf(key: string): Promise<number>;
  /** The primary serving `slot`, as a live node says. */
  ownerOf(slot: number): Promise<ClusterNodeUnderTest>;
  /** The replicas of `primary`, as a live node says. */
  replicasOf(primary: ClusterNodeUnderTest): Promise<ClusterNodeUnderTest[]>;
  /** The primaries not marked failed, as a live node says. */
  primaries(): Promise<ClusterNodeUnderTest[]>;
  /**
   * Moves `slot` to the primary `to`: IMPORTING on `to`, MIGRATING on its owner, then each key with
   * MIGRATE (`pauseMs` between keys keeps the slot in migration longer, so clients meet ASK), then
   * SETSLOT NODE on every primary. Resolves once every node agrees.
   */
  moveSlot(slot: number, to: ClusterNodeUnderTest, o?: SlotMove): Promise<void>;
  /** Waits until every node still running says `cluster_state:ok` and they agree on the primary of every slot. */
  waitOk(timeoutMs?: number): Promise<void>;
  /** Runs `f` on a connection of its own to `node` (closed after). */
  on<T>(node: ClusterNodeUnderTest, f: (r: Redis) => Promise<T>): Promise<T>;
  /** Stops every node and removes their dirs. */
  stop(): Promise<void>;
}

const run = promisify(execFile);

/** A free port other than `port` (freePort answers the same port again until something binds it). */
async function busPort(port: number): Promise<number> {
  for (;;) {
    const p = await freePort();
    if (p !== port) return p;
  }
}

/** A connection of its own to one node, closed after `f`; fails fast when the node does not answer. */
async function onPort<T>(port: number, f: (r: Redis) => Promise<T>, reach: Reach = {}): Promise<T> {
  const r = new Redis({
    port,
    host: '127.0.0.1',
    ...(reach.password ? { password: reach.password } : {}),
    ...(reach.ca ? { tls: { ca: reach.ca } } : {}),
    lazyConnect: true,
    retryStrategy: () => null,
    maxRetriesPerRequest: 0,
    connectTimeout: 2000,
    commandTimeout: 5000,
  });
  r.on('error', () => {});
  try {
    await r.connect();
    return await f(r);
  } finally {
    r.disconnect();
  }
}

/** `CLUSTER NODES`, one line per node: id, address, flags, master id, slots. */
interface NodeLine {
  id: string;
  port: number;
  flags: string[];
  master: string;
  slots: string[];
}
const nodeLines = (text: string): NodeLine[] =>
  text
    .trim()
    .split('\n')
    .map((line) => {
      const [id, addr, flags, master, , , , , ...slots] = line.split(' ');
      return { id: id!, port: Number(/:(\d+)@/.exec(addr!)![1]), flags: flags!.split(','), master: master!, slots };
    });

const serves = (line: NodeLine, slot: number): boolean =>
  line.slots.some((s) => {
    if (s.startsWith('[')) return false; // a migration in progress, not ownership
    const [a, b] = s.split('-').map(Number);
    return slot >= a! && slot <= (b ?? a)!;
  });

/** Starts a Cluster of `primaries` primaries (and `replicas` replicas each) on loopback ports. */
export async function startRedisCluster(o: RedisClusterOptions = {}): Promise<RedisClusterUnderTest> {
  const primaries = o.primaries ?? 3;
  const replicas = o.replicas ?? 0;
  const reach: Reach = { password: o.password, ca: o.tls ? readFileSync(o.tls.ca) : undefined };
  const onNode = <T>(port: number, f: (r: Redis) => Promise<T>): Promise<T> => onPort(port, f, reach);
  const tls = o.tls;
  const tlsArgs = (port: number): string[] =>
    tls
      ? ['--port', '0', '--tls-port', String(port), '--tls-cert-file', tls.cert, '--tls-key-file', tls.key]
          .concat(['--tls-ca-cert-file', tls.ca, '--tls-auth-clients', 'no'])
          .concat(['--tls-client-cert-file', tls.clientCert, '--tls-client-key-file', tls.clientKey])
          .concat(['--tls-replication', 'yes', '--tls-cluster', 'yes'])
      : [];
  const cliAuth = [
    ...(o.password ? ['-a', o.password, '--no-auth-warning'] : []),
    ...(tls ? ['--tls', '--cacert', tls.ca] : []),
  ];
  const starting = await Promise.allSettled(
    Array.from({ length: primaries * (1 + replicas) }, async () => {
      const dir = mkdtempSync(join(tmpdir(), 'vg-redis-cluster-'));
      return startRedisServer({
        dir,
        ...(o.password ? { password: o.password } : {}),
        // The bus port is named, since the default (port + 10000) may be past 65535.
        args: async (port) => [
          '--cluster-enabled',
          'yes',
          '--cluster-port',
          String(await busPort(port)),
          '--cluster-config-file',
          join(dir, 'nodes.conf'),
          '--dir',
          dir,
          '--cluster-node-timeout',
          String(o.nodeTimeoutMs ?? 2000),
          '--cluster-require-full-coverage',
          o.requireFullCoverage === false ? 'no' : 'yes',
          ...tlsArgs(port),
        ],
      }).catch((err: unknown) => {
        rmSync(dir, { recursive: true, force: true });
        throw err;
      });
    }),
  );
  const started = starting.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
  const failed = starting.find((r) => r.status === 'rejected');
  if (failed) {
    await Promise.all(started.map((s) => s.stop()));
    throw failed.reason;
  }
  const nodes: ClusterNodeUnderTest[] = [];
  for (const s of started) {
    const id = await onNode(s.port, (r) => r.call('CLUSTER', 'MYID') as Promise<string>);
    nodes.push(
      Object.assign(s, {
        id,
        address: `127.0.0.1:${s.port}`,
        pause: () => void s.process.kill('SIGSTOP'),
        resume: () => void s.process.kill('SIGCONT'),
      }),
    );
  }
  const stop = async (): Promise<void> => {
    await Promise.all(nodes.map((n) => n.stop()));
  };
  try {
    await run(
      REDIS_CLI,
      [
        ...cliAuth,
        '--cluster',
        'create',
        ...nodes.map((n) => n.address),
        '--cluster-replicas',
        String(replicas),
        '--cluster-yes',
      ],
      { timeout: 60_000 },
    );
  } catch (err) {
    await stop();
    throw new Error(`redis-cli --cluster create failed: ${(err as { stdout?: string }).stdout ?? String(err)}`, {
      cause: err,
    });
  }

  const alive = (): ClusterNodeUnderTest[] =>
    nodes.filter((n) => n.process.exitCode === null && n.process.signalCode === null);
  const byId = (id: string): ClusterNodeUnderTest => {
    const n = nodes.find((x) => x.id === id);
    if (!n) throw new Error(`no node ${id} in this Cluster`);
    return n;
  };
  /** `CLUSTER NODES` as the first live node that answers sees it. */
  const view = async (): Promise<NodeLine[]> => {
    for (const n of alive()) {
      const text = await onNode(n.port, (r) => r.call('CLUSTER', 'NODES') as Promise<string>).catch(() => null);
      if (text) return nodeLines(text);
    }
    throw new Error('no node of the Cluster answers');
  };
  const on = <T>(node: ClusterNodeUnderTest, f: (r: Redis) => Promise<T>): Promise<T> => onNode(node.port, f);

  const cluster: RedisClusterUnderTest = {
    nodes,
    seeds: nodes.map((n) => n.address).join(','),
    env: {
      REDIS_CLUSTER_NODES: nodes.map((n) => n.address).join(','),
      ...(o.password ? { REDIS_PASSWORD: o.password } : {}),
      ...(tls ? { REDIS_TLS: 'true', REDIS_TLS_CA_FILE: tls.ca } : {}),
    },
    on,
    stop,
    slotOf: (key) => onNode(alive()[0]!.port, (r) => r.call('CLUSTER', 'KEYSLOT', key) as Promise<number>),
    async ownerOf(slot) {
      const line = (await view()).find(
        (l) => l.flags.includes('master') && !l.flags.includes('fail') && serves(l, slot),
      );
      if (!line) throw new Error(`no primary serves slot ${slot}`);
      return byId(line.id);
    },
    async primaries() {
      return (await view())
        .filter((l) => l.flags.includes('master') && !l.flags.includes('fail'))
        .map((l) => byId(l.id));
    },
    async replicasOf(primary) {
      return (await view()).filter((l) => l.master === primary.id).map((l) => byId(l.id));
    },
    async waitOk(timeoutMs = 30_000) {
      let last = '';
      await until(
        async () => {
          const answers = await Promise.all(
            alive().map((n) =>
              onNode(n.port, async (r) => ({
                info: (await r.call('CLUSTER', 'INFO')) as string,
                // Who serves each slot range, as this node sees it.
                slots: JSON.stringify(
                  ((await r.call('CLUSTER', 'SLOTS')) as unknown[][])
                    .map((s) => [s[0], s[1], (s[2] as unknown[])[1]])
                    .sort(),
                ),
              })).catch((err: unknown) => ({ info: String(err), slots: '' })),
            ),
          );
          last = answers.map((a) => /cluster_state:\w+/.exec(a.info)?.[0] ?? a.info).join(' ');
          return (
            answers.every((a) => a.info.includes('cluster_state:ok')) && new Set(answers.map((a) => a.slots)).size === 1
          );
        },
        () => `cluster_state:ok on every node, agreeing on the slots (${last})`,
        timeoutMs,
        100,
      );
    },
    async moveSlot(slot, to, m = {}) {
      const from = await cluster.ownerOf(slot);
      if (from === to) return;
      await on(to, (r) => r.call('CLUSTER', 'SETSLOT', slot, 'IMPORTING', from.id));
      await on(from, (r) => r.call('CLUSTER', 'SETSLOT', slot, 'MIGRATING', to.id));
      const first = [...(m.first ?? [])];
      for (;;) {
        const keys = first.length
          ? [first.shift()!]
          : ((await on(from, (r) => r.call('CLUSTER', 'GETKEYSINSLOT', slot, 1))) as string[]);
        if (keys.length === 0) break;
        await on(from, (r) =>
          r.call(
            'MIGRATE',
            '127.0.0.1',
            to.port,
            '',
            0,
            5000,
            'REPLACE',
            ...(o.password ? ['AUTH', o.password] : []),
            'KEYS',
            ...keys,
          ),
        );
        if (m.pauseMs) await new Promise((resolve) => setTimeout(resolve, m.pauseMs));
      }
      // The new owner first, so a client redirected by the old one finds it serving.
      await on(to, (r) => r.call('CLUSTER', 'SETSLOT', slot, 'NODE', to.id));
      await on(from, (r) => r.call('CLUSTER', 'SETSLOT', slot, 'NODE', to.id));
      for (const n of (await view()).filter((l) => l.flags.includes('master') && l.id !== from.id && l.id !== to.id))
        await on(byId(n.id), (r) => r.call('CLUSTER', 'SETSLOT', slot, 'NODE', to.id)).catch(() => undefined);
      await cluster.waitOk();
    },
  };
  try {
    await cluster.waitOk(60_000);
    if (replicas > 0)
      await until(
        async () =>
          (
            await Promise.all(
              alive().map((n) =>
                onNode(n.port, (r) => r.info('replication')).then(
                  (i) => i.includes('role:master') || i.includes('master_link_status:up'),
                  () => false,
                ),
              ),
            )
          ).every(Boolean),
        'every replica linked to its primary',
        30_000,
        100,
      );
  } catch (err) {
    await stop();
    throw err;
  }
  return cluster;
}
