/**
 * The gateway's own CPU per request: user + system time of the gateway process (from
 * `/proc/<pid>/stat`) over sequential requests at one connection, after a warm-up, for a plain
 * Nomad list of 100 and the same with attachments, over the bench's simulator in its own process.
 * Given several checkouts it runs them alternately (two rounds), so a change can be compared
 * back to back on one machine. Linux only (/proc).
 *
 *   node --import tsx bench/cpu-per-request.ts [TREE …]   (default: this checkout)
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { BENCH_TOKEN } from './constants';

const TREES = process.argv.length > 2 ? process.argv.slice(2) : [process.cwd()];
const MAIN = join(__dirname, '..');
const TOKEN = BENCH_TOKEN;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const freePort = () =>
  new Promise<number>((ok) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const p = (s.address() as { port: number }).port;
      s.close(() => ok(p));
    });
  });

/** utime + stime of a process in clock ticks (10 ms each on Linux). */
function ticks(pid: number): number {
  const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return Number(f[11]) + Number(f[12]);
}

async function sim(): Promise<{ url: string; child: ChildProcess }> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'bench/sim-server.ts'], { cwd: MAIN, stdio: ['ignore', 'pipe', 'inherit'] });
  const url = await new Promise<string>((ok) => {
    let s = '';
    child.stdout!.on('data', (d) => {
      s += d;
      const m = /SIM_URL=(\S+)/.exec(s);
      if (m) ok(m[1]!);
    });
  });
  return { url, child };
}

async function gateway(tree: string, simUrl: string) {
  const port = await freePort();
  const child = spawn(process.execPath, ['--import', 'tsx', 'server/main.ts'], { cwd: tree, stdio: ['ignore', 'ignore', 'inherit'], env: { ...process.env, PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'warn', READINESS_PROBE_INTERVAL_MS: '3600000', GATEWAY_BACKENDS: `bench=nomad@${simUrl}`, GATEWAY_BACKEND_BENCH_TOKEN: TOKEN, RATE_LIMIT_CALLER_RPS: '0', RATE_LIMIT_ADDRESS_RPS: '0' } });
  const base = `http://127.0.0.1:${port}/graphql`;
  for (let i = 0; i < 200; i++) {
    if (await fetch(`http://127.0.0.1:${port}/healthz`).then((r) => r.ok, () => false)) break;
    await sleep(200);
  }
  return { child, base };
}

const Q = {
  list: '{ volumes(first: 100) { nodes { id name status } } }',
  listAttachments: '{ volumes(first: 100) { nodes { id name status attachments { state } } } }',
};

async function run(base: string, query: string, n: number) {
  for (let i = 0; i < n; i++) {
    const r = await fetch(base, { method: 'POST', headers: { 'content-type': 'application/json', 'x-nomad-token': TOKEN }, body: JSON.stringify({ query }) });
    const b = (await r.json()) as { errors?: unknown };
    if (b.errors) throw new Error(JSON.stringify(b.errors));
  }
}

async function main() {
  const s = await sim();
    try {
    for (let round = 0; round < 2; round++) {
      for (const tree of TREES) {
        const g = await gateway(tree, s.url);
        try {
          for (const [name, q] of Object.entries(Q)) {
            const n = name === 'list' ? 400 : 100;
            await run(g.base, q, 100);
            const t0 = ticks(g.child.pid!);
            const w0 = Date.now();
            await run(g.base, q, n);
            const ms = ((ticks(g.child.pid!) - t0) * 10) / n;
            console.log(`${tree} round ${round} ${name}: ${ms.toFixed(2)} ms CPU/request, ${((Date.now() - w0) / n).toFixed(2)} ms wall`);
          }
        } finally {
          g.child.kill('SIGTERM');
          await new Promise((r) => g.child.once('exit', r));
        }
      }
    }
  } finally {
    s.child.kill('SIGTERM');
  }
}
void main();
