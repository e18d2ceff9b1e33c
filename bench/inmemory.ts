/**
 * Benchmark: the GraphQL layer alone. The compiled gateway over its `memory` backend only (100
 * volumes × 2 attachments, generated), with every feature on (operation limits, typed errors, the
 * federation subgraph schema, OpenTelemetry loaded with sampling off, logging at its default
 * level, metrics), next to a plain node:http + graphql-jit server (bench/jit-server.ts) serving the
 * same shape over the same data, and to Apollo Server with graphql-jit answering from its
 * `responseForOperation` hook over that same schema and data (bench/apollo-jit-server.ts: what Apollo's pipeline alone costs). All three
 * answer each query identically (`data` compared before any load); then they are loaded in turn
 * (jit, Apollo, gateway, jit …) and the medians compared.
 * The servers share CPU 0, the load generator (bench/load-child.ts) runs on CPU 1.
 *
 *   node --import tsx bench/inmemory.ts                 full run, writes a section of bench/RESULTS.md
 *   INMEM_SHORT=1 node --import tsx bench/inmemory.ts   a few seconds, prints the ratios only
 *   INMEM_ROUNDS=3                                      load runs per server, query and connection count (default 3; short: 1)
 *   INMEM_REQUESTS=n                                    counted requests per load run (default: each query's own, short: a twentieth)
 *   INMEM_PROFILE=dir                                   CPU profile of the gateway (node --cpu-prof) into dir, summarized by bench/inmem-profile.ts
 *   INMEM_ONLY=list|one                                 load only the list or only volume(id) (profiling)
 *   BENCH_OUT=path                                      write the results elsewhere
 *
 * Compare ratios within one run; absolute figures move with the machine and its load.
 */
import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { Kind, parse, print, type DefinitionNode, type FieldDefinitionNode } from 'graphql';
import { buildReferenceServers } from './inmem-build';
import { ATTACHMENTS, GATEWAY_ENV, MEMORY_LIST, READY_WITH_TRACING, TOKEN_HEADER, VOLUMES } from './inmem-setup';
import { summarizeProfiles } from './inmem-profile';
import { JIT_SDL } from './jit-server';
import { median, type LoadResult } from './load';
import { pinnedLoad } from './pinned-load';
import { cpuMs, killStarted, machineFacts, root, startBuiltGateway, startCompiled } from './processes';
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
  {
    key: 'list',
    name: `volumes(first: ${VOLUMES}) × ${ATTACHMENTS} attachments`,
    body: JSON.stringify({ query: MEMORY_LIST }),
    requests: { 1: 2000, 50: 4000 },
  },
  // vol-0042: the global id the gateway and the reference both issue (checked below).
  { key: 'one', name: 'volume(id)', body: '', requests: { 1: 6000, 50: 12000 } },
];
const CONNECTIONS = [1, 50];

/** Fails unless every field, argument, enum value and union member of the reference's SDL is the gateway's (published schema), with the same type. */
function checkSameShape(): void {
  const published = parse(readFileSync(join(root, 'schema/generated/published.graphql'), 'utf8'));
  const byName = new Map<string, DefinitionNode[]>();
  for (const d of published.definitions)
    if ('name' in d && d.name) byName.set(d.name.value, [...(byName.get(d.name.value) ?? []), d]);
  const fieldsOf = (name: string): FieldDefinitionNode[] =>
    (byName.get(name) ?? []).flatMap((d) => ('fields' in d && d.fields ? (d.fields as FieldDefinitionNode[]) : []));
  const problems: string[] = [];
  for (const d of parse(JIT_SDL).definitions) {
    if (!('name' in d) || !d.name) continue;
    const name = d.name.value;
    if (!byName.has(name)) problems.push(`${name}: not in the gateway's schema`);
    if (d.kind === Kind.OBJECT_TYPE_DEFINITION) {
      for (const f of d.fields ?? []) {
        const g = fieldsOf(name).find((x) => x.name.value === f.name.value);
        if (!g) problems.push(`${name}.${f.name.value}: not in the gateway's schema`);
        else if (print(g.type) !== print(f.type))
          problems.push(`${name}.${f.name.value}: ${print(f.type)}, the gateway has ${print(g.type)}`);
        for (const a of f.arguments ?? []) {
          const ga = g?.arguments?.find((x) => x.name.value === a.name.value);
          if (
            !ga ||
            print(ga.type) !== print(a.type) ||
            (ga.defaultValue && print(ga.defaultValue)) !== (a.defaultValue && print(a.defaultValue))
          )
            problems.push(`${name}.${f.name.value}(${a.name.value}): differs from the gateway's`);
        }
      }
    } else if (d.kind === Kind.ENUM_TYPE_DEFINITION) {
      const mine = (d.values ?? []).map((v) => v.name.value).sort();
      const theirs = (byName.get(name) ?? [])
        .flatMap((x) => ('values' in x && x.values ? x.values.map((v) => v.name.value) : []))
        .sort();
      if (!isDeepStrictEqual(mine, theirs))
        problems.push(`enum ${name}: ${mine.join(' ')}, the gateway has ${theirs.join(' ')}`);
    } else if (d.kind === Kind.UNION_TYPE_DEFINITION) {
      const theirs = new Set(
        (byName.get(name) ?? []).flatMap((x) => ('types' in x && x.types ? x.types.map((t) => t.name.value) : [])),
      );
      for (const t of d.types ?? [])
        if (!theirs.has(t.name.value))
          problems.push(`union ${name}: ${t.name.value} is not a member in the gateway's schema`);
    }
  }
  if (problems.length > 0) throw new Error(`the reference's SDL is not the gateway's shape:\n${problems.join('\n')}`);
}

/** Starts the compiled reference server at `path` pinned to `cpus`; it prints its URL after `ready` (`JIT_URL=`, `APOLLO_URL=`). */
async function startReference(
  path: string,
  ready: RegExp,
  cpus: string,
): Promise<{ child: ChildProcess; url: string }> {
  const { child, match } = await startCompiled(
    path,
    { JIT_VOLUMES: String(VOLUMES), JIT_ATTACHMENTS: String(ATTACHMENTS), JIT_BACKEND: 'lab' },
    ready,
    [],
    cpus,
  );
  return { child, url: match[1]! };
}

async function post(url: string, body: string): Promise<{ data?: unknown; errors?: unknown }> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...TOKEN_HEADER },
    body,
  });
  return (await res.json()) as { data?: unknown; errors?: unknown };
}

interface Sample {
  load: LoadResult;
  /** Server CPU (user + system) per counted request, ms; from /proc, 10 ms ticks. */
  cpuPerRequest: number;
}

/** The servers, loaded in this order each round. */
const SERVERS = ['jit', 'apollo', 'gateway'] as const;
type Server = (typeof SERVERS)[number];

interface Row extends Record<Server, Sample[]> {
  query: string;
  connections: number;
}

async function main(): Promise<void> {
  checkSameShape();
  const nodeArgs = profileDir ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : [];
  // The gateway first: it compiles the build the references are compiled into. Its ready line waits
  // for "tracing on": the SDK really loaded.
  const gw = await startBuiltGateway(GATEWAY_ENV, READY_WITH_TRACING, nodeArgs, SERVER_CPU);
  const references = buildReferenceServers();
  const [jit, apollo] = await Promise.all([
    startReference(references['jit-server'], /JIT_URL=(\S+)/, SERVER_CPU),
    startReference(references['apollo-jit-server'], /APOLLO_URL=(\S+)/, SERVER_CPU),
  ]);
  const gwUrl = gw.match[1]!.replace('localhost', '127.0.0.1');

  // volume(id) reads vol-0042 by the id the gateway issues; the reference must know the same id.
  const listed = (await post(
    gwUrl,
    JSON.stringify({ query: '{ volumes(first: 100) { nodes { id nativeId } } }' }),
  )) as { data: { volumes: { nodes: Array<{ id: string; nativeId: string }> } } };
  const id = listed.data.volumes.nodes.find((v) => v.nativeId === 'vol-0042')!.id;
  QUERIES[1]!.body = JSON.stringify({ query: ONE_VOLUME, variables: { id } });

  for (const q of QUERIES) {
    const [g, j, a] = [await post(gwUrl, q.body), await post(jit.url, q.body), await post(apollo.url, q.body)];
    if (g.errors || j.errors || a.errors)
      throw new Error(
        `${q.name}: errors\ngateway: ${JSON.stringify(g.errors)}\njit: ${JSON.stringify(j.errors)}\napollo: ${JSON.stringify(a.errors)}`,
      );
    for (const [which, r] of [
      ['gateway', g],
      ['apollo', a],
    ] as const) {
      if (!isDeepStrictEqual(r.data, j.data))
        throw new Error(
          `${q.name}: the ${which}'s and the reference's data differ\n${which}: ${JSON.stringify(r.data).slice(0, 600)}\njit: ${JSON.stringify(j.data).slice(0, 600)}`,
        );
    }
  }
  console.log('same data from the three servers for every query; tracing SDK loaded, sampler always_off');

  const servers: Record<Server, { url: string; pid: number }> = {
    jit: { url: jit.url, pid: jit.child.pid! },
    apollo: { url: apollo.url, pid: apollo.child.pid! },
    gateway: { url: gwUrl, pid: gw.child.pid! },
  };
  const rows: Row[] = [];
  for (const q of QUERIES.filter((x) => !process.env.INMEM_ONLY || x.key === process.env.INMEM_ONLY)) {
    for (const connections of CONNECTIONS) {
      const row: Row = { query: q.name, connections, jit: [], apollo: [], gateway: [] };
      const requests = process.env.INMEM_REQUESTS
        ? Number(process.env.INMEM_REQUESTS)
        : short
          ? Math.round(q.requests[connections]! / 20)
          : q.requests[connections]!;
      const warmup = short ? Math.max(2, Math.round(100 / connections)) : Math.max(5, Math.round(1000 / connections));
      for (let r = 0; r < rounds; r++) {
        for (const which of SERVERS) {
          const s = servers[which];
          const cpu0 = cpuMs(s.pid);
          const load = await pinnedLoad(
            {
              url: s.url,
              headers: { 'content-type': 'application/json', ...TOKEN_HEADER },
              body: q.body,
              graphql: true,
              connections,
              requests,
              warmup,
            },
            LOAD_CPU,
          );
          const cpu = cpuMs(s.pid) - cpu0;
          if (load.errors > 0) throw new Error(`${which} ${q.name} at ${connections}: ${load.errors} errors`);
          row[which].push({ load, cpuPerRequest: cpu / (requests + warmup * connections) });
          console.log(
            `${q.name} c=${connections} round ${r} ${which}: ${load.throughput.toFixed(0)} req/s, p50 ${load.p50.toFixed(2)} ms, p99 ${load.p99.toFixed(2)} ms`,
          );
        }
      }
      rows.push(row);
    }
  }

  const m = (xs: Sample[], f: (s: Sample) => number): number => median(xs.map(f));
  const rps = (xs: Sample[]): number => m(xs, (s) => s.load.throughput);
  const each = (xs: Sample[]): string => xs.map((s) => s.load.throughput.toFixed(0)).join(', ');
  const latency = (xs: Sample[]): string =>
    `${m(xs, (s) => s.load.p50).toFixed(2)} / ${m(xs, (s) => s.load.p99).toFixed(2)}`;
  const lines = rows.map((r) => {
    const [jr, ar, gr] = [rps(r.jit), rps(r.apollo), rps(r.gateway)];
    return `| ${r.query} | ${r.connections} | ${jr.toFixed(0)} (${each(r.jit)}) | ${ar.toFixed(0)} (${each(r.apollo)}) | ${gr.toFixed(0)} (${each(r.gateway)}) | **${(gr / jr).toFixed(2)}** | ${(ar / jr).toFixed(2)} | ${(gr / ar).toFixed(2)} |`;
  });
  const table = `| query | connections | jit req/s, median (each run) | Apollo + jit req/s | gateway req/s | gateway ÷ jit | Apollo + jit ÷ jit | gateway ÷ Apollo + jit |
|---|---|---|---|---|---|---|---|
${lines.join('\n')}`;
  const costLines = rows.map(
    (r) =>
      `| ${r.query} | ${r.connections} | ${SERVERS.map((w) => latency(r[w])).join(' | ')} | ${SERVERS.map((w) => m(r[w], (s) => s.cpuPerRequest).toFixed(3)).join(' | ')} |`,
  );
  const costs = `| query | connections | jit p50 / p99 ms | Apollo + jit p50 / p99 ms | gateway p50 / p99 ms | jit CPU ms/req | Apollo + jit CPU ms/req | gateway CPU ms/req |
|---|---|---|---|---|---|---|---|
${costLines.join('\n')}`;
  console.log(`\n${table}\n\n${costs}\n`);
  for (const r of rows) {
    console.log(
      `ratio: in-memory ${r.query} at ${r.connections} conn., gateway ÷ graphql-jit req/s = ${(rps(r.gateway) / rps(r.jit)).toFixed(2)}`,
    );
    console.log(
      `ratio: in-memory ${r.query} at ${r.connections} conn., Apollo Server + graphql-jit ÷ graphql-jit req/s = ${(rps(r.apollo) / rps(r.jit)).toFixed(2)}`,
    );
  }

  // SIGINT: the gateway stops without its drain period (and writes its CPU profile).
  gw.child.kill('SIGINT');
  jit.child.kill('SIGTERM');
  apollo.child.kill('SIGTERM');
  await Promise.all([gw, jit, apollo].filter((s) => s.child.exitCode === null).map((s) => once(s.child, 'exit')));
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
node:http + graphql-jit ${(JSON.parse(readFileSync(join(root, 'node_modules/graphql-jit/package.json'), 'utf8')) as { version: string }).version} over the same shape (its SDL is checked field by field against
the published schema) and the same data (the memory backend's seed generator); the answers are
checked equal in \`data\` before loading. A second reference (\`bench/apollo-jit-server.ts\`) serves the same schema,
resolvers and data through Apollo Server ${(JSON.parse(readFileSync(join(root, 'node_modules/@apollo/server/package.json'), 'utf8')) as { version: string }).version} with graphql-jit answering from its \`responseForOperation\` hook (the gateway's
own \`compiledExecution\` plugin), Apollo's defaults otherwise except the landing page and cache control (off in the
gateway too), and nothing of the gateway's (no limits, tracing, logs,
metrics or context): what it leaves of graphql-jit is what Apollo's request pipeline alone costs, the
ceiling of any path through Apollo. The three servers are pinned to CPU ${SERVER_CPU}, the load generator
(\`bench/load-child.ts\`, closed loop, undici) to CPU ${LOAD_CPU}; the servers are loaded in turn, ${rounds}
runs each, medians reported (each run in brackets, in order). CPU per request is the server's
user + system time (\`/proc\`, 10 ms ticks) over the run and its warm-up.

List: \`${MEMORY_LIST}\`. One volume: \`${ONE_VOLUME}\`.

${machineFacts()}

${table}

${costs}
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
