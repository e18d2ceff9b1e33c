/**
 * Benchmark: the GraphQL layer alone. The compiled gateway over its `memory` backend only (100
 * volumes × 2 attachments, generated), with every feature on (operation limits, typed errors, the
 * federation subgraph schema, OpenTelemetry loaded with sampling off, logging at its default
 * level, metrics), next to a plain node:http + graphql-jit server (bench/jit-server.ts) serving the
 * same shape over the same data. Both answer each query identically (`data` compared before any
 * load); then the two are loaded in turn (jit, gateway, jit, gateway …) and the medians compared.
 * The servers share CPU 0, the load generator (bench/load-child.ts) runs on CPU 1.
 *
 *   node --import tsx bench/inmemory.ts                 full run, writes a section of bench/RESULTS.md
 *   INMEM_SHORT=1 node --import tsx bench/inmemory.ts   a few seconds, prints the ratios only
 *   INMEM_ROUNDS=3                                      load runs per server, query and connection count (default 3; short: 1)
 *   INMEM_PROFILE=dir                                   CPU profile of the gateway (node --cpu-prof) into dir, summarized by bench/inmem-profile.ts
 *   INMEM_ONLY=list|one                                 load only the list or only volume(id) (profiling)
 *   BENCH_OUT=path                                      write the results elsewhere
 *
 * Compare ratios within one run; absolute figures move with the machine and its load.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { parse, print, type DefinitionNode, type FieldDefinitionNode } from 'graphql';
import { buildJitServer } from './inmem-build';
import { ATTACHMENTS, GATEWAY_ENV, MEMORY_LIST, READY_WITH_TRACING, TOKEN_HEADER, VOLUMES } from './inmem-setup';
import { summarizeProfiles } from './inmem-profile';
import { JIT_SDL } from './jit-server';
import { median, type LoadResult } from './load';
import { pinnedLoad } from './pinned-load';
import { cpuMs, killStarted, machineFacts, pinned, root, started, startBuiltGateway } from './processes';
import { ONE_VOLUME } from './queries';
import { writeSection } from './results-file';

const short = process.env.INMEM_SHORT === '1';
const rounds = Number(process.env.INMEM_ROUNDS ?? (short ? 1 : 3));
const profileDir = process.env.INMEM_PROFILE;
const out = process.env.BENCH_OUT ?? join(__dirname, 'RESULTS.md');
/** The servers' CPU and the load generator's. */
const SERVER_CPU = '0';
const LOAD_CPU = '1';

interface Query {
  /** For INMEM_ONLY. */
  key: 'list' | 'one';
  name: string;
  body: string;
  /** Counted requests per load run, by connections (full mode; short takes a twentieth). */
  requests: Record<number, number>;
}

const QUERIES: Query[] = [
  { key: 'list', name: `volumes(first: ${VOLUMES}) × ${ATTACHMENTS} attachments`, body: JSON.stringify({ query: MEMORY_LIST }), requests: { 1: 2000, 50: 4000 } },
  // vol-0042: the global id the gateway and the reference both issue (checked below).
  { key: 'one', name: 'volume(id)', body: '', requests: { 1: 6000, 50: 12000 } },
];
const CONNECTIONS = [1, 50];

/** Fails unless every field, argument, enum value and union member of the reference's SDL is the gateway's (published schema), with the same type. */
function checkSameShape(): void {
  const published = parse(readFileSync(join(root, 'schema/generated/published.graphql'), 'utf8'));
  const byName = new Map<string, DefinitionNode[]>();
  for (const d of published.definitions) if ('name' in d && d.name) byName.set(d.name.value, [...(byName.get(d.name.value) ?? []), d]);
  const fieldsOf = (name: string): FieldDefinitionNode[] => (byName.get(name) ?? []).flatMap((d) => ('fields' in d && d.fields ? (d.fields as FieldDefinitionNode[]) : []));
  const problems: string[] = [];
  for (const d of parse(JIT_SDL).definitions) {
    if (!('name' in d) || !d.name) continue;
    const name = d.name.value;
    if (!byName.has(name)) problems.push(`${name}: not in the gateway's schema`);
    if (d.kind === 'ObjectTypeDefinition') {
      for (const f of d.fields ?? []) {
        const g = fieldsOf(name).find((x) => x.name.value === f.name.value);
        if (!g) problems.push(`${name}.${f.name.value}: not in the gateway's schema`);
        else if (print(g.type) !== print(f.type)) problems.push(`${name}.${f.name.value}: ${print(f.type)}, the gateway has ${print(g.type)}`);
        for (const a of f.arguments ?? []) {
          const ga = g?.arguments?.find((x) => x.name.value === a.name.value);
          if (!ga || print(ga.type) !== print(a.type) || (ga.defaultValue && print(ga.defaultValue)) !== (a.defaultValue && print(a.defaultValue))) problems.push(`${name}.${f.name.value}(${a.name.value}): differs from the gateway's`);
        }
      }
    } else if (d.kind === 'EnumTypeDefinition') {
      const mine = (d.values ?? []).map((v) => v.name.value).sort();
      const theirs = (byName.get(name) ?? []).flatMap((x) => ('values' in x && x.values ? x.values.map((v) => v.name.value) : [])).sort();
      if (!isDeepStrictEqual(mine, theirs)) problems.push(`enum ${name}: ${mine.join(' ')}, the gateway has ${theirs.join(' ')}`);
    } else if (d.kind === 'UnionTypeDefinition') {
      const theirs = new Set((byName.get(name) ?? []).flatMap((x) => ('types' in x && x.types ? x.types.map((t) => t.name.value) : [])));
      for (const t of d.types ?? []) if (!theirs.has(t.name.value)) problems.push(`union ${name}: ${t.name.value} is not a member in the gateway's schema`);
    }
  }
  if (problems.length > 0) throw new Error(`the reference's SDL is not the gateway's shape:\n${problems.join('\n')}`);
}

/** Starts the compiled reference server pinned to `cpus`. */
async function startJit(cpus: string): Promise<{ child: ChildProcess; url: string }> {
  const [cmd, args] = pinned(cpus, [buildJitServer()]);
  const child = spawn(cmd, args, { cwd: root, env: { ...process.env, JIT_VOLUMES: String(VOLUMES), JIT_ATTACHMENTS: String(ATTACHMENTS), JIT_BACKEND: 'lab' }, stdio: ['ignore', 'pipe', 'inherit'] });
  started.push(child);
  let buf = '';
  const url = await new Promise<string>((ok, fail) => {
    child.stdout!.on('data', (d: Buffer) => {
      buf += d.toString();
      const m = /JIT_URL=(\S+)/.exec(buf);
      if (m) ok(m[1]!);
    });
    child.once('exit', (code) => fail(new Error(`jit-server exited with ${code}: ${buf}`)));
  });
  return { child, url };
}

async function post(url: string, body: string): Promise<{ data?: unknown; errors?: unknown }> {
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...TOKEN_HEADER }, body });
  return (await res.json()) as { data?: unknown; errors?: unknown };
}


interface Sample {
  load: LoadResult;
  /** Server CPU (user + system) per counted request, ms; from /proc, 10 ms ticks. */
  cpuPerRequest: number;
}

interface Row {
  query: string;
  connections: number;
  jit: Sample[];
  gateway: Sample[];
}

async function main(): Promise<void> {
  checkSameShape();
  const nodeArgs = profileDir ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : [];
  // Both at once (the gateway first: it compiles the build the reference is compiled into). The
  // gateway's ready line waits for "tracing on": the SDK really loaded.
  const [gw, jit] = await Promise.all([startBuiltGateway(GATEWAY_ENV, READY_WITH_TRACING, nodeArgs, SERVER_CPU), startJit(SERVER_CPU)]);
  const gwUrl = gw.match[1]!.replace('localhost', '127.0.0.1');
  // Stop collecting its output (processes.ts keeps it until ready): at LOG_LEVEL=info the gateway logs every request.
  gw.child.stdout!.removeAllListeners('data');
  gw.child.stdout!.resume();

  // volume(id) reads vol-0042 by the id the gateway issues; the reference must know the same id.
  const listed = (await post(gwUrl, JSON.stringify({ query: '{ volumes(first: 100) { nodes { id nativeId } } }' }))) as { data: { volumes: { nodes: Array<{ id: string; nativeId: string }> } } };
  const id = listed.data.volumes.nodes.find((v) => v.nativeId === 'vol-0042')!.id;
  QUERIES[1]!.body = JSON.stringify({ query: ONE_VOLUME, variables: { id } });

  for (const q of QUERIES) {
    const [g, j] = [await post(gwUrl, q.body), await post(jit.url, q.body)];
    if (g.errors || j.errors) throw new Error(`${q.name}: errors\ngateway: ${JSON.stringify(g.errors)}\njit: ${JSON.stringify(j.errors)}`);
    if (!isDeepStrictEqual(g.data, j.data)) throw new Error(`${q.name}: the gateway's and the reference's data differ\ngateway: ${JSON.stringify(g.data).slice(0, 600)}\njit: ${JSON.stringify(j.data).slice(0, 600)}`);
  }
  console.log('same data from both servers for every query; tracing SDK loaded, sampler always_off');

  const servers = { jit: { url: jit.url, pid: jit.child.pid! }, gateway: { url: gwUrl, pid: gw.child.pid! } };
  const rows: Row[] = [];
  for (const q of QUERIES.filter((x) => !process.env.INMEM_ONLY || x.key === process.env.INMEM_ONLY)) {
    for (const connections of CONNECTIONS) {
      const row: Row = { query: q.name, connections, jit: [], gateway: [] };
      const requests = short ? Math.round(q.requests[connections]! / 20) : q.requests[connections]!;
      const warmup = short ? Math.max(2, Math.round(100 / connections)) : Math.max(5, Math.round(1000 / connections));
      for (let r = 0; r < rounds; r++) {
        for (const which of ['jit', 'gateway'] as const) {
          const s = servers[which];
          const cpu0 = cpuMs(s.pid);
          const load = await pinnedLoad({ url: s.url, headers: { 'content-type': 'application/json', ...TOKEN_HEADER }, body: q.body, graphql: true, connections, requests, warmup }, LOAD_CPU);
          const cpu = cpuMs(s.pid) - cpu0;
          if (load.errors > 0) throw new Error(`${which} ${q.name} at ${connections}: ${load.errors} errors`);
          row[which].push({ load, cpuPerRequest: cpu / (requests + warmup * connections) });
          console.log(`${q.name} c=${connections} round ${r} ${which}: ${load.throughput.toFixed(0)} req/s, p50 ${load.p50.toFixed(2)} ms, p99 ${load.p99.toFixed(2)} ms`);
        }
      }
      rows.push(row);
    }
  }

  const m = (xs: Sample[], f: (s: Sample) => number): number => median(xs.map(f));
  const lines = rows.map((r) => {
    const [jr, gr] = [m(r.jit, (s) => s.load.throughput), m(r.gateway, (s) => s.load.throughput)];
    const each = (xs: Sample[], f: (s: Sample) => number, d: number): string => xs.map((s) => f(s).toFixed(d)).join(', ');
    return `| ${r.query} | ${r.connections} | ${jr.toFixed(0)} (${each(r.jit, (s) => s.load.throughput, 0)}) | ${gr.toFixed(0)} (${each(r.gateway, (s) => s.load.throughput, 0)}) | **${(gr / jr).toFixed(2)}** | ${m(r.jit, (s) => s.load.p50).toFixed(2)} / ${m(r.jit, (s) => s.load.p99).toFixed(2)} | ${m(r.gateway, (s) => s.load.p50).toFixed(2)} / ${m(r.gateway, (s) => s.load.p99).toFixed(2)} | ${m(r.jit, (s) => s.cpuPerRequest).toFixed(3)} | ${m(r.gateway, (s) => s.cpuPerRequest).toFixed(3)} |`;
  });
  const table = `| query | connections | jit req/s, median (each run) | gateway req/s, median (each run) | gateway ÷ jit | jit p50 / p99 ms | gateway p50 / p99 ms | jit CPU ms/req | gateway CPU ms/req |
|---|---|---|---|---|---|---|---|---|
${lines.join('\n')}`;
  console.log(`\n${table}\n`);
  for (const r of rows) console.log(`ratio: in-memory ${r.query} at ${r.connections} conn., gateway ÷ graphql-jit req/s = ${(m(r.gateway, (s) => s.load.throughput) / m(r.jit, (s) => s.load.throughput)).toFixed(2)}`);

  // SIGINT: the gateway stops without its drain period (and writes its CPU profile).
  gw.child.kill('SIGINT');
  jit.child.kill('SIGTERM');
  await Promise.all([gw.child.exitCode === null ? once(gw.child, 'exit') : undefined, jit.child.exitCode === null ? once(jit.child, 'exit') : undefined]);
  let profile = '';
  if (profileDir) {
    profile = summarizeProfiles(profileDir);
    console.log(profile);
  }
  if (short) return;

  const md = `## In-memory: the gateway against node:http + graphql-jit

\`node --import tsx bench/inmemory.ts\`, one run. The compiled gateway over its \`memory\` backend only
(\`GATEWAY_BACKENDS=lab=memory\`, ${VOLUMES} generated volumes × ${ATTACHMENTS} attachments), with every feature on:
operation limits (defaults), typed errors, the federation subgraph schema, OpenTelemetry loaded
(OTLP exporter, \`OTEL_TRACES_SAMPLER=always_off\`), \`LOG_LEVEL=info\`, \`NODE_ENV=production\`, metrics;
caller and address rate limits lifted (\`bench/constants.ts\`). The reference (\`bench/jit-server.ts\`) is
node:http + graphql-jit ${require('graphql-jit/package.json').version} over the same shape (its SDL is checked field by field against
the published schema) and the same data (the memory backend's seed generator); both answers are
checked equal in \`data\` before loading. Both servers are pinned to CPU ${SERVER_CPU}, the load generator
(\`bench/load-child.ts\`, closed loop, undici) to CPU ${LOAD_CPU}; the servers are loaded in turn, ${rounds}
runs each, medians reported (each run in brackets, in order). CPU per request is the server's
user + system time (\`/proc\`, 10 ms ticks) over the run and its warm-up.

List: \`${MEMORY_LIST}\`. One volume: \`${ONE_VOLUME}\`.

${machineFacts()}

${table}
${profile ? `\n### Where the gateway's time goes\n\n${profile}\n` : ''}`;
  writeSection(out, 'inmemory', md);
  console.log(`wrote the inmemory section of ${out}`);
}

main()
  .catch((e) => {
    console.error(e);
    process.exitCode = 1;
  })
  .finally(killStarted);
