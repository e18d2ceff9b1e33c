/**
 * Counts the project files three request paths really run through, measured, not read off the
 * imports: the gateway runs as a child process in demo mode with V8's precise coverage on, and
 * every file with a function called inside a window counts. Three windows per path; a file counts
 * when it ran in all three (background timers that fire in one window only drop out).
 *
 * Paths (issue 18 "Done when"):
 * - A: `Volume.attachments` on a Nomad list (`volumes(first: 100)` of `nomad-east`, one request);
 * - B: an OpenStack `attachVolume` to completion (the mutation, then the gateway's own tracking
 *      until the operation is SUCCEEDED);
 * - C: one live event, from Nomad's event stream to the graphql-ws socket (a demo claim/release).
 * "Edge" is what `{ __typename }` runs (HTTP, Apollo, limits, logs, metrics): A and B are also
 * given without it, i.e. from the field to the wire. Simulators, the demo wiring and tests run in
 * the same process and are left out. Run against any checkout (the tree needs `node_modules`):
 *
 *   npx tsx scripts/path-hops.ts [--tree DIR]
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import WebSocket from 'ws';
import { messageText } from '../server/ws/message-text';

const args = process.argv.slice(2);
const tree = resolve(args.includes('--tree') ? args[args.indexOf('--tree') + 1]! : process.cwd());
const work = mkdtempSync(join(tmpdir(), 'path-hops-'));
const RUNS = 3;

// Loaded into the gateway with --require: coverage on from the first line; each SIGUSR2 writes
// the files called since the previous one (taking precise coverage resets the counts).
const PROBE = `
const inspector = require('node:inspector'); const fs = require('node:fs');
const s = new inspector.Session(); s.connect();
s.post('Profiler.enable'); s.post('Profiler.startPreciseCoverage', { callCount: true, detailed: false });
let n = 0;
process.on('SIGUSR2', () => s.post('Profiler.takePreciseCoverage', (err, r) => {
  const urls = err ? [] : r.result.filter((x) => x.functions.some((f) => f.ranges[0] && f.ranges[0].count > 0)).map((x) => x.url);
  fs.writeFileSync(process.env.HOPS_OUT + '.' + (n++), JSON.stringify(urls));
}));
`;

const OPENSTACK = { 'content-type': 'application/json', 'x-auth-token': 'demo-openstack-token' };
const SCRATCH =
  'WyJWb2x1bWUiLCJvcGVuc3RhY2siLCJjMGJjZjNiYWYwMTU0YjViYjRkZDJmOGVkOTU5Y2RkNiIsImQwMDAwMDAwLTAwMDAtNDAwMC04MDAwLTAwMDAwMDAwMDAwNSJd';
const BATCH_1 = 'a0000000-0000-4000-8000-000000000004';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function freePort(): Promise<number> {
  return new Promise((ok) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const p = (s.address() as { port: number }).port;
      s.close(() => ok(p));
    });
  });
}

/** One gateway child in demo mode with the probe loaded. */
class Gateway {
  private taken = 0;
  private constructor(
    readonly child: ChildProcess,
    readonly base: string,
    private readonly out: string,
  ) {}

  static async start(name: string, activityMs: number | null): Promise<Gateway> {
    const port = await freePort();
    const probe = join(work, 'probe.cjs');
    writeFileSync(probe, PROBE);
    const out = join(work, name);
    const child = spawn(process.execPath, ['--import', 'tsx', 'server/main.ts'], {
      cwd: tree,
      env: {
        ...process.env,
        PORT: String(port),
        HOST: '127.0.0.1',
        LOG_LEVEL: 'warn',
        DEMO_ACTIVITY: activityMs === null ? '0' : '1',
        ...(activityMs === null ? {} : { DEMO_ACTIVITY_INTERVAL_MS: String(activityMs) }),
        READINESS_PROBE_INTERVAL_MS: '3600000',
        NODE_OPTIONS: `--require ${probe}`,
        HOPS_OUT: out,
      },
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    const g = new Gateway(child, `http://127.0.0.1:${port}`, out);
    for (let i = 0; i < 240; i++) {
      if (
        await fetch(`${g.base}/healthz`).then(
          (r) => r.ok,
          () => false,
        )
      )
        return g;
      await sleep(250);
    }
    child.kill('SIGKILL');
    throw new Error('the gateway did not start');
  }

  /** The tree's files with a function called since the previous call. */
  async take(): Promise<Set<string>> {
    const file = `${this.out}.${this.taken++}`;
    this.child.kill('SIGUSR2');
    for (let i = 0; i < 200 && !existsSync(file); i++) await sleep(25);
    await sleep(50);
    const urls = JSON.parse(readFileSync(file, 'utf8')) as string[];
    const files = new Set<string>();
    for (const u of urls) {
      // CommonJS scripts are named by path, ES modules by URL.
      const p = u.startsWith('file://') ? fileURLToPath(u) : u;
      if (!p.startsWith(`${tree}/`) || !p.endsWith('.ts')) continue;
      const rel = p.slice(tree.length + 1);
      if (/^(node_modules|simulators|test|scripts|bench)\//.test(rel) || /^server\/demo[^/]*\.ts$/.test(rel)) continue;
      files.add(rel);
    }
    return files;
  }

  async gql(
    query: string,
    variables: Record<string, unknown> = {},
    headers: Record<string, string> = { 'content-type': 'application/json' },
  ): Promise<any> {
    const r = await fetch(`${this.base}/graphql`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ query, variables }),
    });
    const body = (await r.json()) as { data?: any; errors?: unknown[] };
    if (body.errors) throw new Error(JSON.stringify(body.errors));
    return body.data;
  }

  async stop(): Promise<void> {
    this.child.kill('SIGTERM');
    await new Promise((r) => this.child.once('exit', r));
  }
}

const intersect = (sets: Set<string>[]) => new Set([...sets[0]!].filter((f) => sets.every((s) => s.has(f))));
/** Leaves out the other backend's folder: its watcher's background work, not the path. */
const without = (s: Set<string>, folder: string) => new Set([...s].filter((f) => !f.startsWith(folder)));

/** Runs `step` RUNS times after a warm-up, each inside its own window. */
async function windows(g: Gateway, step: () => Promise<void>, between?: () => Promise<void>): Promise<Set<string>> {
  await step();
  await between?.();
  const sets: Set<string>[] = [];
  for (let i = 0; i < RUNS; i++) {
    await g.take();
    await step();
    sets.push(await g.take());
    await between?.();
  }
  return intersect(sets);
}

async function operationState(g: Gateway, id: string): Promise<string> {
  return (await g.gql('query ($id: ID!) { volumeOperation(id: $id) { state } }', { id }, OPENSTACK)).volumeOperation
    .state;
}

async function waitState(g: Gateway, id: string): Promise<void> {
  for (let i = 0; i < 300; i++) {
    const s = await operationState(g, id);
    if (s === 'SUCCEEDED') return;
    if (s !== 'PENDING' && s !== 'RUNNING') throw new Error(`operation ${s}`);
    await sleep(100);
  }
  throw new Error('operation did not finish');
}

async function measureRequests(): Promise<{ edge: Set<string>; list: Set<string>; attach: Set<string> }> {
  const g = await Gateway.start('requests', null);
  try {
    const edge = await windows(g, async () => void (await g.gql('{ __typename }')));
    const list = await windows(
      g,
      async () =>
        void (await g.gql(
          '{ volumes(first: 100, filter: { backends: ["nomad-east"] }) { nodes { id attachments { id state } } } }',
        )),
    );
    // The attach inside the window waits for completion by watching its record in the tracker's
    // own time: a fixed wait, then the state is checked outside the window.
    let last = '';
    const attach = await windows(
      g,
      async () => {
        const d = await g.gql(
          `mutation { attachVolume(input: { volumeId: "${SCRATCH}", target: { server: { serverId: "${BATCH_1}" } } }) { operation { id } } }`,
          {},
          OPENSTACK,
        );
        last = d.attachVolume.operation.id;
        await sleep(6_000);
      },
      async () => {
        if ((await operationState(g, last)) !== 'SUCCEEDED')
          throw new Error('the attach had not finished inside its window; lengthen the wait');
        const d = await g.gql(
          `mutation { detachVolume(input: { volumeId: "${SCRATCH}", target: { server: { serverId: "${BATCH_1}" } } }) { operation { id } } }`,
          {},
          OPENSTACK,
        );
        await waitState(g, d.detachVolume.operation.id);
        await sleep(1_000);
      },
    );
    return { edge, list: without(list, 'adapters/openstack/'), attach: without(attach, 'adapters/nomad/') };
  } finally {
    await g.stop();
  }
}

async function measureLive(): Promise<Set<string>> {
  const g = await Gateway.start('live', 1_500);
  const ws = new WebSocket(`${g.base.replace('http', 'ws')}/graphql`, 'graphql-transport-ws');
  const events: number[] = [];
  let wake: (() => void) | undefined;
  ws.on('message', (raw) => {
    const m = JSON.parse(messageText(raw));
    if (m.type === 'connection_ack')
      ws.send(
        JSON.stringify({
          id: '1',
          type: 'subscribe',
          payload: {
            query:
              'subscription { volumeChanged(filter: { backends: ["nomad-east"], types: [CLAIMED, RELEASED] }) { type volume { id status } } }',
          },
        }),
      );
    if (m.type === 'next' && m.payload?.data?.volumeChanged?.type !== 'SUBSCRIBED') {
      events.push(Date.now());
      wake?.();
    }
  });
  await new Promise((r) => ws.once('open', r));
  ws.send(JSON.stringify({ type: 'connection_init', payload: {} }));
  const next = () => new Promise<void>((r) => (wake = r));
  try {
    // A window runs from one Nomad event's arrival to the next one's.
    await next();
    await next();
    const sets: Set<string>[] = [];
    for (let i = 0; i < RUNS; i++) {
      await g.take();
      await next();
      const files = await g.take();
      // The window also holds the demo's OpenStack step and that backend's polling: not this path.
      sets.push(without(files, 'adapters/openstack/'));
    }
    return intersect(sets);
  } finally {
    ws.close();
    await g.stop();
  }
}

function byFolder(files: Set<string>): string {
  const counts = new Map<string, number>();
  for (const f of files) {
    const parts = f.split('/');
    const folder =
      parts[0] === 'adapters' && parts.length > 2 ? `adapters/${parts[1]}` : parts.length > 1 ? parts[0]! : '.';
    counts.set(folder, (counts.get(folder) ?? 0) + 1);
  }
  return [...counts]
    .sort((a, b) => b[1] - a[1])
    .map(([k, v]) => `${k} ${v}`)
    .join(', ');
}

async function main(): Promise<void> {
  const { edge, list, attach } = await measureRequests();
  const live = await measureLive();
  const beyondEdge = (s: Set<string>) => new Set([...s].filter((f) => !edge.has(f)));
  const rows: Array<[string, Set<string>]> = [
    ['edge: `{ __typename }`', edge],
    ['A: Nomad list with `attachments`', list],
    ['A without the edge (field to wire)', beyondEdge(list)],
    ['B: OpenStack `attachVolume` to completion', attach],
    ['B without the edge', beyondEdge(attach)],
    ['C: live event, Nomad stream to socket', live],
  ];
  const sha = await new Promise<string>((ok) => {
    const c = spawn('git', ['-C', tree, 'rev-parse', '--short', 'HEAD']);
    let s = '';
    c.stdout.on('data', (d) => (s += d));
    c.on('close', () => ok(s.trim()));
  });
  console.log(`Files run by each path at ${sha} (precise coverage, in all ${RUNS} windows):\n`);
  console.log('| path | files | by folder |\n|---|---|---|');
  for (const [name, s] of rows) console.log(`| ${name} | ${s.size} | ${byFolder(s)} |`);
  console.log('');
  for (const [name, s] of rows) console.log(`${name}:\n  ${[...s].sort().join('\n  ')}\n`);
}

main()
  .catch((err) => {
    console.error(err);
    process.exitCode = 1;
  })
  .finally(() => rmSync(work, { recursive: true, force: true }));
