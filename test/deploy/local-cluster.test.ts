/**
 * `npm run cluster` (scripts/local-cluster.ts) as its user runs it: the script is started, its
 * printed URLs and pids are read, GraphQL queries go through its HAProxy and reach every replica
 * (each replica's own /metrics counts them), a replica killed with SIGKILL is marked DOWN by the
 * health checks and the queries go on through the others, a replica sent SIGTERM drains and closes
 * its WebSockets with 1012 (the client's reconnect lands on another replica), and
 * SIGTERM to the script leaves no process, port or file behind.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, readFileSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import WebSocket from 'ws';
import { DEFAULT_SHUTDOWN_DRAIN_MS } from '../../server/readiness';
import { HAPROXY, HAPROXY_TEMPLATE, startHaproxy, stopHaproxies } from '../support/haproxy';
import { until } from '../support/until';

const ROOT = join(__dirname, '..', '..');
const QUERY = '{ volumes(first: 2, filter: { backends: ["openstack"] }) { nodes { id name } } }';

interface Cluster {
  lb: string;
  stats: string;
  dir: string;
  haproxyConfig: string;
  pids: { haproxy: number; redis: number };
  replicas: Array<{ url: string; pid: number }>;
}

/** What the script printed, read as its user would. */
function parse(out: string): Cluster {
  const one = (re: RegExp): string => {
    const m = re.exec(out);
    if (!m) throw new Error(`${re} not in the script's output:\n${out}`);
    return m[1]!;
  };
  return {
    lb: one(/load balancer\s+(http:\/\/\S+)\/graphql/),
    stats: one(/stats (http:\/\/\S+)/),
    dir: one(/\(files in (\S+)\)/),
    haproxyConfig: one(/config (\S+)/),
    pids: { haproxy: Number(one(/haproxy\s+pid (\d+)/)), redis: Number(one(/redis\s+redis:\/\/\S+\s+pid (\d+)/)) },
    replicas: [...out.matchAll(/replica \d+\s+(http:\/\/\S+)\/graphql\s+pid (\d+)/g)].map((m) => ({
      url: m[1]!,
      pid: Number(m[2]),
    })),
  };
}

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

const accepts = (url: string): Promise<boolean> =>
  new Promise((resolve) => {
    const { hostname, port } = new URL(url);
    const s = connect(Number(port), hostname, () => (s.destroy(), resolve(true)));
    s.on('error', () => resolve(false));
  });

/** A volumes query through `base`; its HTTP status and whether it listed the demo's volumes. */
async function query(base: string): Promise<{ status: number; listed: boolean }> {
  const res = await fetch(`${base}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-auth-token': 'demo-openstack-token' },
    body: JSON.stringify({ query: QUERY }),
  });
  const body = (await res.json().catch(() => ({}))) as { data?: { volumes?: { nodes: unknown[] } } };
  return { status: res.status, listed: (body.data?.volumes?.nodes.length ?? 0) > 0 };
}

/** The GraphQL operations a replica counted (`gateway_graphql_operations_total`, all labels). */
async function operations(replica: string): Promise<number> {
  const text = await (await fetch(`${replica}/metrics`)).text();
  return [...text.matchAll(/^gateway_graphql_operations_total\{[^}]*\} (\S+)$/gm)].reduce(
    (n, m) => n + Number(m[1]),
    0,
  );
}

/** A graphql-ws socket through `base`, acknowledged. */
async function graphqlWs(base: string): Promise<WebSocket> {
  const socket = new WebSocket(`${base.replace(/^http/, 'ws')}/graphql`, 'graphql-transport-ws');
  await once(socket, 'open');
  socket.send(JSON.stringify({ type: 'connection_init', payload: {} }));
  const [message] = (await once(socket, 'message')) as [Buffer];
  expect(JSON.parse(message.toString())).toEqual({ type: 'connection_ack' });
  return socket;
}

/** The graphql-ws sockets a replica has open (`gateway_ws_connections`). */
async function wsConnections(replica: string): Promise<number> {
  const text = await (await fetch(`${replica}/metrics`)).text();
  return Number(/^gateway_ws_connections (\S+)$/m.exec(text)?.[1]);
}

/** HAProxy's health-check state of each replica, from its stats page's CSV. */
async function states(stats: string): Promise<Record<string, string>> {
  const csv = await (await fetch(`${stats};csv`)).text();
  return Object.fromEntries(
    csv
      .split('\n')
      .map((l) => l.split(','))
      .filter((f) => f[0] === 'replicas' && /^replica\d+$/.test(f[1] ?? ''))
      .map((f) => [f[1]!, f[17]!.startsWith('UP ') ? `${f[17]} (${f[36]} ${f[37]})` : f[17]!]),
  );
}

/** A duration of the HAProxy configuration (`2s`, `12h`, `500ms`) in ms. */
const ms = (d: string): number =>
  Number(/^\d+/.exec(d)![0]) * { ms: 1, s: 1e3, m: 6e4, h: 3.6e6 }[/[a-z]+$/.exec(d)![0]]!;

describe('deploy/haproxy/haproxy.cfg', () => {
  const cfg = readFileSync(HAPROXY_TEMPLATE, 'utf8');
  const setting = (re: RegExp): string => re.exec(cfg)?.[1] ?? '';

  it("should be a valid configuration as it is (HAProxy's own check, its addresses from the defaults)", () => {
    expect(() => execFileSync(HAPROXY, ['-c', '-q', '-f', HAPROXY_TEMPLATE], { stdio: 'pipe' })).not.toThrow();
  });

  it('should balance round robin without stickiness, check /readyz, and keep WebSockets open for hours', () => {
    expect(setting(/^\s*balance (\S+)$/m)).toBe('roundrobin');
    expect(cfg).not.toMatch(/^\s*(cookie|stick|hash-type)\b/m);
    expect(setting(/^\s*http-check send meth GET uri (\S+)/m)).toBe('/readyz');
    expect(ms(setting(/^\s*timeout tunnel (\S+)$/m))).toBeGreaterThanOrEqual(3_600_000);
    // The gateway answers a slow operation itself (OPERATION_TIMEOUT_MS, 30 s) before HAProxy gives up.
    expect(ms(setting(/^\s*timeout server (\S+)$/m))).toBeGreaterThan(30_000);
  });

  it('should take a draining replica out before its drain ends (SHUTDOWN_DRAIN_MS), while it still serves', () => {
    const [inter, fastinter, fall] = [
      ms(setting(/ inter (\S+)/)),
      ms(setting(/ fastinter (\S+)/)),
      Number(setting(/ fall (\d+)/)),
    ];
    // The first failed check (a 503, at once) comes within one interval, the next ones `fastinter` apart.
    const outAfter = inter + (fall - 1) * fastinter;
    expect(outAfter).toBeLessThan(DEFAULT_SHUTDOWN_DRAIN_MS);
    // Its WebSockets are the gateway's to close (1012 after the drain), not HAProxy's.
    expect(cfg).not.toMatch(/^\s*[^#\s].*on-marked-down shutdown-sessions/m);
  });
});

describe('npm run cluster (scripts/local-cluster.ts)', () => {
  let script: ChildProcess;
  let out = '';
  let cluster: Cluster;

  beforeAll(async () => {
    script = spawn(
      process.execPath,
      ['--import', 'tsx', 'scripts/local-cluster.ts', '--replicas', '3', '--port', '0'],
      {
        cwd: ROOT,
        // No demo activity: nothing changes by itself while the test counts.
        env: { ...process.env, DEMO_ACTIVITY: '0', LOG_LEVEL: 'warn' },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    script.stdout!.on('data', (d: Buffer) => (out += d.toString()));
    script.stderr!.on('data', (d: Buffer) => (out += d.toString()));
    await until(
      () => /Ctrl-C stops everything/.test(out) || script.exitCode !== null,
      () => `the cluster to start:\n${out}`,
      90_000,
      100,
    );
    if (script.exitCode !== null) throw new Error(`the script exited: ${out}`);
    cluster = parse(out);
  }, 100_000);

  afterAll(async () => {
    await stopHaproxies();
    // Only if a test failed before SIGTERM: nothing may outlive the test.
    if (script.exitCode === null) script.kill('SIGKILL');
    for (const pid of [cluster?.pids.haproxy, cluster?.pids.redis, ...(cluster?.replicas ?? []).map((r) => r.pid)])
      if (pid && alive(pid)) process.kill(pid, 'SIGKILL');
  });

  it('should print the load balancer, HAProxy, Redis and three replicas, each with its pid', () => {
    expect(cluster.replicas).toHaveLength(3);
    for (const pid of [cluster.pids.haproxy, cluster.pids.redis, ...cluster.replicas.map((r) => r.pid)])
      expect({ pid, alive: alive(pid) }).toEqual({ pid, alive: true });
    expect(new Set(cluster.replicas.map((r) => r.url)).size).toBe(3);
  });

  it('should answer queries through HAProxy from every replica (round robin)', async () => {
    const before = await Promise.all(cluster.replicas.map((r) => operations(r.url)));
    const answers = [];
    for (let i = 0; i < 9; i++) answers.push(await query(cluster.lb));
    expect(answers).toEqual(Array.from({ length: 9 }, () => ({ status: 200, listed: true })));
    const after = await Promise.all(cluster.replicas.map((r) => operations(r.url)));
    const served = after.map((n, i) => n - before[i]!);
    expect(served.every((n) => n >= 1)).toBe(true);
    expect(served.reduce((a, b) => a + b)).toBe(9);
  });

  it('should carry a graphql-ws WebSocket through HAProxy (the upgrade in HTTP mode)', async () => {
    const socket = await graphqlWs(cluster.lb);
    socket.close();
    await once(socket, 'close');
  });

  it("should route through test/support/haproxy.ts's load balancer, and after a graceful reload to the replicas of the new list only", async () => {
    const [r1, r2, r3] = cluster.replicas.map((r) => r.url);
    const lb = await startHaproxy([`${r1}/graphql`, r2!]);
    const served = async (n: number): Promise<number[]> => {
      const before = await Promise.all(cluster.replicas.map((r) => operations(r.url)));
      const answers = [];
      for (let i = 0; i < n; i++) answers.push(await query(lb.url));
      expect(answers).toEqual(Array.from({ length: n }, () => ({ status: 200, listed: true })));
      return (await Promise.all(cluster.replicas.map((r) => operations(r.url)))).map((x, i) => x - before[i]!);
    };
    expect(await served(4)).toEqual([2, 2, 0]);
    // A connection opened before the reload is served to its end by the old worker.
    const open = connect(lb.port, '127.0.0.1');
    await once(open, 'connect');
    const oldPid = lb.pid;
    await lb.reload([r3!]);
    expect(lb.pid).toBe(oldPid);
    expect(await served(3)).toEqual([0, 0, 3]);
    expect(await lb.serverStates()).toEqual({ replica1: 'UP' });
    const answer = new Promise<string>((resolve) => {
      let text = '';
      open.on('data', (d: Buffer) => (text += d.toString()));
      open.on('close', () => resolve(text));
    });
    open.end(`GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`);
    expect(await answer).toMatch(/^HTTP\/1\.1 200/);
    await stopHaproxies();
    expect(await accepts(lb.url)).toBe(false);
  }, 30_000);

  it('should go on answering through the other replicas once HAProxy marks a SIGKILLed one DOWN', async () => {
    const [first, killed, third] = cluster.replicas;
    process.kill(killed!.pid, 'SIGKILL');
    // Until its health check fails twice (2 s apart, then 1 s: about 3 s), a request sent on a
    // connection the crash closed gets 502; a refused connection is sent to another replica.
    await until(
      async () => (await states(cluster.stats)).replica2 === 'DOWN',
      () => `HAProxy to mark replica 2 DOWN:\n${out}`,
      20_000,
      100,
    );
    const before = await Promise.all([first!, third!].map((r) => operations(r.url)));
    const answers = [];
    for (let i = 0; i < 8; i++) answers.push(await query(cluster.lb));
    expect(answers).toEqual(Array.from({ length: 8 }, () => ({ status: 200, listed: true })));
    const after = await Promise.all([first!, third!].map((r) => operations(r.url)));
    expect(after.map((n, i) => n - before[i]!)).toEqual([4, 4]);
    // UP, or "UP 1/2" after one slow check on this loaded machine: in rotation either way.
    expect(await states(cluster.stats)).toEqual({
      replica1: expect.stringMatching(/^UP/),
      replica2: 'DOWN',
      replica3: expect.stringMatching(/^UP/),
    });
    // The live page is served through the load balancer still, as a replica serves it (200, or
    // 503 with "how to build it" in a tree never built: `npm run cluster` builds first).
    const direct = await fetch(`${first!.url}/live`);
    const through = await fetch(`${cluster.lb}/live`);
    expect({ status: through.status, page: await through.text() }).toEqual({
      status: direct.status,
      page: await direct.text(),
    });
    // The script says what happened.
    expect(out).toMatch(new RegExp(`replica 2 \\(pid ${killed!.pid}\\) exited \\(SIGKILL\\)`));
    expect(out).toMatch(/haproxy: Server replicas\/replica2 is DOWN/);
  }, 40_000);

  it("should close a SIGTERMed replica's WebSockets with 1012 after its drain, and take the client's reconnect on another replica", async () => {
    const survivors = [cluster.replicas[0]!, cluster.replicas[2]!];
    const socket = await graphqlWs(cluster.lb);
    let holder: { url: string; pid: number } | undefined;
    await until(
      async () => {
        const open = await Promise.all(survivors.map((r) => wsConnections(r.url)));
        holder = survivors[open.indexOf(1)];
        return holder !== undefined;
      },
      'the socket on a replica',
      10_000,
      50,
    );
    const other = survivors.find((r) => r !== holder)!;
    const closed = once(socket, 'close') as Promise<[number, Buffer]>;
    process.kill(holder!.pid, 'SIGTERM');
    const [code] = await closed;
    expect(code).toBe(1012);
    // By then (after SHUTDOWN_DRAIN_MS) HAProxy has marked it DOWN (and a connection it refuses
    // would be redispatched): the client's reconnect goes elsewhere.
    const again = await graphqlWs(cluster.lb);
    expect(await wsConnections(other.url)).toBe(1);
    again.close();
    await until(
      () => /exited \(code 0\)/.test(out),
      () => `the drained replica's exit:\n${out}`,
      20_000,
      100,
    );
  }, 40_000);

  it('should stop everything it started on SIGTERM: no process, no listening port, no file left', async () => {
    const exited = once(script, 'exit');
    script.kill('SIGTERM');
    const [code] = (await exited) as [number | null];
    expect(code).toBe(0);
    const pids = [cluster.pids.haproxy, cluster.pids.redis, ...cluster.replicas.map((r) => r.pid)];
    // Exited children of the script are reaped by it; HAProxy's worker went with its master.
    expect(pids.filter(alive)).toEqual([]);
    expect(await accepts(cluster.lb)).toBe(false);
    expect(await accepts(cluster.stats)).toBe(false);
    expect([cluster.dir, cluster.haproxyConfig].filter((f) => existsSync(f))).toEqual([]);
  }, 30_000);
});
