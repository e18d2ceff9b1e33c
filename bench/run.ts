/**
 * Benchmark: gateway vs direct REST calls to the simulated Nomad for the same data, in one run.
 * The simulator and the gateway each run in their own process; this process generates load.
 *
 *   npm run bench                 full run, writes bench/RESULTS.md
 *   BENCH_SHORT=1 npm run bench   about ten times fewer requests (used by the test suite)
 *   BENCH_OUT=path                write the results elsewhere
 *
 * Compare ratios within one run; absolute times move with the machine and its load.
 */
import { spawn, execSync, type ChildProcess } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { cpus, totalmem, release, platform } from 'node:os';
import { join } from 'node:path';
import { once } from 'node:events';
import { Pool } from 'undici';
import { runLoad, type LoadResult } from './load';
import { BENCH_TOKEN } from './constants';

const root = join(__dirname, '..');
const short = process.env.BENCH_SHORT === '1';
const out = process.env.BENCH_OUT ?? join(__dirname, 'RESULTS.md');
const scale = (n: number): number => (short ? Math.max(10, Math.round(n / 10)) : n);

function start(args: string[], env: Record<string, string>, ready: RegExp): Promise<{ child: ChildProcess; match: RegExpExecArray }> {
  const child = spawn(process.execPath, ['--import', 'tsx', ...args], { cwd: root, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'inherit'] });
  return new Promise((resolve, reject) => {
    let buf = '';
    const timer = setTimeout(() => reject(new Error(`${args.join(' ')} did not start: ${buf}`)), 60_000);
    child.stdout!.on('data', (d: Buffer) => {
      buf += d.toString();
      const m = ready.exec(buf);
      if (m) {
        clearTimeout(timer);
        resolve({ child, match: m });
      }
    });
    child.once('exit', (code) => reject(new Error(`${args.join(' ')} exited with ${code}: ${buf}`)));
  });
}

async function body(res: { statusCode: number; body: { text(): Promise<string> } }): Promise<unknown> {
  const text = await res.body.text();
  if (res.statusCode !== 200) throw new Error(`HTTP ${res.statusCode}: ${text.slice(0, 200)}`);
  return JSON.parse(text);
}

async function main(): Promise<void> {
  const sim = await start(['bench/sim-server.ts'], {}, /SIM_URL=(\S+)/);
  const simUrl = sim.match[1]!;
  const gw = await start(['server/main.ts'], { GATEWAY_BACKENDS: `bench=nomad@${simUrl}`, HOST: '127.0.0.1', PORT: '0', LOG_LEVEL: 'warn' }, /ready at (\S+)/);
  const gwUrl = new URL(gw.match[1]!);
  const gwPool = new Pool(gwUrl.origin, { connections: 64 });
  const simPool = new Pool(simUrl, { connections: 64 });
  const auth = { 'x-nomad-token': BENCH_TOKEN };

  const gql = async (query: string, variables: Record<string, unknown> = {}): Promise<any> => {
    const res = await gwPool.request({ method: 'POST', path: gwUrl.pathname, headers: { 'content-type': 'application/json', ...auth }, body: JSON.stringify({ query, variables }) });
    const b = (await body(res)) as { errors?: unknown[]; data: unknown };
    if (b.errors) throw new Error(JSON.stringify(b.errors));
    return b.data;
  };
  const rest = async (path: string): Promise<any> => body(await simPool.request({ method: 'GET', path, headers: auth }));

  const first = await gql(`{ volumes(first: 1) { nodes { id } } }`);
  const volumeId: string = first.volumes.nodes[0].id;

  const ONE = `query($id: ID!) { volume(id: $id) { id name status capacityBytes attachments { state } } }`;
  const LIST = `{ volumes(first: 100) { nodes { id name status capacityBytes attachments { state access consumer { ... on NomadAllocation { id jobId nodeId } } } } } }`;

  const scenarios = [
    {
      name: 'volume(id) with attachments',
      gateway: () => gql(ONE, { id: volumeId }).then(() => undefined),
      direct: () => rest('/v1/volume/csi/bench-000?namespace=default').then(() => undefined),
      directCalls: 1,
      requests: { 1: scale(3000), 50: scale(6000) } as Record<number, number>,
    },
    {
      name: 'volumes(first: 100) with attachments',
      gateway: () => gql(LIST).then(() => undefined),
      // What a client does without the gateway: list stubs, then read each volume (16 at a time, like the gateway).
      direct: async () => {
        const stubs = (await rest('/v1/volumes?type=csi&namespace=*&per_page=100')) as Array<{ ID: string; Namespace: string }>;
        for (let i = 0; i < stubs.length; i += 16) {
          await Promise.all(stubs.slice(i, i + 16).map((s) => rest(`/v1/volume/csi/${encodeURIComponent(s.ID)}?namespace=${s.Namespace}`)));
        }
      },
      directCalls: 101,
      requests: { 1: scale(150), 50: scale(400) } as Record<number, number>,
    },
  ];

  const clearLog = (): Promise<unknown> => simPool.request({ method: 'DELETE', path: '/_sim/requests' }).then((r) => r.body.text());
  const countLog = async (): Promise<number> => ((await rest('/_sim/requests')) as unknown[]).length;

  const rows: string[] = [];
  const summary: Array<{ scenario: string; connections: number; gateway: LoadResult; direct: LoadResult; calls: number }> = [];
  for (const s of scenarios) {
    await clearLog();
    await s.gateway();
    const calls = await countLog();
    for (const connections of [1, 50]) {
      const requests = s.requests[connections]!;
      const warmup = connections === 1 ? scale(50) : 2;
      await clearLog();
      const direct = await runLoad(s.direct, { connections, requests, warmup });
      await clearLog();
      const gateway = await runLoad(s.gateway, { connections, requests, warmup });
      await clearLog();
      summary.push({ scenario: s.name, connections, gateway, direct, calls });
      const f = (n: number): string => n.toFixed(2);
      rows.push(
        `| ${s.name} | ${connections} | ${f(gateway.p50)} | ${f(gateway.p99)} | ${gateway.throughput.toFixed(0)} | ${f(direct.p50)} | ${f(direct.p99)} | ${direct.throughput.toFixed(0)} | ${f(gateway.p50 - direct.p50)} | ${(gateway.p50 / direct.p50).toFixed(2)} | ${calls} / ${s.directCalls} | ${gateway.errors + direct.errors} |`,
      );
      console.log(rows.at(-1));
    }
  }

  const commit = (() => {
    try {
      return execSync('git rev-parse --short HEAD', { cwd: root }).toString().trim();
    } catch {
      return 'unknown';
    }
  })();
  const cpu = cpus();
  const one = summary.find((x) => x.connections === 1 && x.scenario.startsWith('volume(id)'))!;
  const md = `# Benchmark results

Generated by \`npm run bench\`${short ? ' (BENCH_SHORT=1: reduced request counts)' : ''} on ${new Date().toISOString()}.

| machine | |
|---|---|
| CPU | ${cpu[0]?.model ?? 'unknown'} × ${cpu.length} |
| memory | ${(totalmem() / 2 ** 30).toFixed(1)} GiB |
| OS | ${platform()} ${release()} |
| Node.js | ${process.version} |
| commit | ${commit} |

Setup: simulated Nomad (100 CSI volumes, 20 claimed) in one process, the gateway in another,
this load generator in a third, all on loopback on the same machine. "Direct" is what a client
does without the gateway for the same data: one REST read for \`volume(id)\`; for the list, the
list call plus one read per volume (Nomad list stubs carry no allocations), 16 at a time like
the gateway. Latencies in milliseconds. Each row ran the direct calls first, then the gateway.
"Backend calls" counts the simulator's request log for one query. With 50 connections the three
processes share two cores, so those rows are CPU-bound for both sides; compare the ratios.

| scenario | connections | gateway p50 | gateway p99 | gateway req/s | direct p50 | direct p99 | direct req/s | overhead p50 (ms) | gateway/direct p50 | backend calls (gateway / direct) | errors |
|---|---|---|---|---|---|---|---|---|---|---|---|
${rows.join('\n')}

Target: gateway overhead over direct REST ≤ 1 ms at p50 with 1 connection for \`volume(id)\`:
measured **${(one.gateway.p50 - one.direct.p50).toFixed(2)} ms** (${one.gateway.p50 - one.direct.p50 <= 1 ? 'met' : 'not met'}).
`;
  writeFileSync(out, md);
  console.log(`wrote ${out}`);
  await gwPool.close();
  await simPool.close();
  gw.child.kill('SIGTERM');
  sim.child.kill('SIGTERM');
  await Promise.all([once(gw.child, 'exit'), once(sim.child, 'exit')]);
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
