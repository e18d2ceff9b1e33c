/**
 * Where a process's CPU time went, from V8 CPU profiles (`node --cpu-prof`): self time grouped by
 * the code it ran in (a package in node_modules, a folder of the gateway's build, a Node.js
 * module, the garbage collector), as markdown tables of shares of the busy time.
 *
 *   node --import tsx bench/inmem-profile.ts DIR   (every *.cpuprofile in DIR)
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
}

interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

/** The group a frame's self time counts for. */
export function groupOf(url: string, fn: string): string {
  if (url === '')
    return fn === '(garbage collector)'
      ? 'GC'
      : fn === '(idle)'
        ? 'idle'
        : fn === '(program)'
          ? 'V8/native (program)'
          : `native ${fn}`;
  const nm = /node_modules\/((?:@[^/]+\/)?[^/]+)\/(.*)$/.exec(url);
  if (nm) {
    const [, pkg, rest] = nm;
    // graphql-js by phase: parse, validate, execute, the rest.
    if (pkg === 'graphql') return `graphql/${rest!.split('/')[0]}`;
    if (pkg === '@apollo/server') return `@apollo/server/${rest!.split('/').slice(-2, -1)[0] ?? ''}`.replace(/\/$/, '');
    return pkg!;
  }
  const build = /\.bench-build\/(.*)$/.exec(url);
  if (build) {
    const parts = build[1]!.split('/');
    // Folders two deep (server/limits, adapters/memory); files directly in server/ by name.
    return parts.length > 2 ? `${parts[0]}/${parts[1]}` : parts.join('/').replace(/\.js$/, '');
  }
  if (url.startsWith('node:')) return url.replace(/^node:(internal\/)?/, 'node:').replace(/\/.*$/, '');
  return url;
}

/** The cost centre of the in-memory benchmark's question ("where does a request's time go") a frame belongs to. */
export function categoryOf(url: string, fn: string): string {
  const g = groupOf(url, fn);
  if (fn === 'prettyJSONStringify' || fn === 'writeString' || fn === 'utf8Write')
    return 'serialization (JSON.stringify of the result, string to socket)';
  if (g === 'GC') return 'GC';
  if (g === 'native runMicrotasks') return 'promises (microtask queue)';
  if (g === 'adapters/contract' || g === 'domain/ids' || g === 'native base64urlSlice' || g === 'node:buffer')
    return 'global ids (JSON + base64url)';
  if (g === 'idle') return 'idle';
  if (g.startsWith('graphql/')) return 'graphql-js (parse, validate, execute)';
  if (g === '@apollo/server/cacheControl' || g === 'lru-cache')
    return "Apollo's implicit cache-control plugin (willResolveField on every field)";
  if (g === '@apollo/server/utils') return 'Apollo plugin hooks and resolver instrumentation';
  if (g.startsWith('@apollo/server')) return 'Apollo request pipeline';
  if (g.startsWith('@apollo/') || g.startsWith('@graphql-tools')) return 'federation, schema tools';
  if (g === 'server/limits' || g === 'domain/execution-limits' || g === 'domain/caller-limiter')
    return 'limits and cost';
  if (g.startsWith('resolvers')) return 'resolvers';
  if (g === 'adapters/memory' || g === 'adapters/listing' || g === 'adapters/http')
    return 'backend (memory) and merged listing';
  if (g === 'dataloader' || g.startsWith('domain')) return 'context, DataLoader, domain';
  if (g === 'pino' || g === 'sonic-boom' || g === 'thread-stream' || g.startsWith('@pinojs') || g === 'server/logger')
    return 'logging';
  if (g === 'prom-client' || g === 'server/observability' || g === 'server/metrics' || g === 'server/operation-labels')
    return 'metrics and the observability plugin';
  if (g.startsWith('@opentelemetry') || g === 'server/tracing' || g === 'node:async_hooks')
    return 'tracing (OpenTelemetry, async context)';
  if (
    g === 'node:modules' ||
    g === 'native internalModuleStat' ||
    g === 'native readFileUtf8' ||
    g === 'native compileFunction'
  )
    return 'module loading (start-up)';
  if (
    g.startsWith('server/http') ||
    g.startsWith('node:') ||
    g === 'native writev' ||
    g === 'negotiator' ||
    g === 'whatwg-mimetype' ||
    g.startsWith('server/')
  )
    return 'HTTP, sockets, Node.js internals';
  return 'other';
}

function load(path: string): CpuProfile {
  return JSON.parse(readFileSync(path, 'utf8')) as CpuProfile;
}

/** Self time in µs per group and per function of the profiles in `dir`. */
export function selfTimes(dir: string): {
  groups: Map<string, number>;
  functions: Map<string, number>;
  categories: Map<string, number>;
} {
  const groups = new Map<string, number>();
  const categories = new Map<string, number>();
  const functions = new Map<string, number>();
  for (const f of readdirSync(dir).filter((x) => x.endsWith('.cpuprofile'))) {
    const p = load(join(dir, f));
    const byId = new Map(p.nodes.map((n) => [n.id, n]));
    for (let i = 0; i < p.samples.length; i++) {
      const n = byId.get(p.samples[i]!)!;
      const dt = p.timeDeltas[i] ?? 0;
      const g = groupOf(n.callFrame.url, n.callFrame.functionName);
      groups.set(g, (groups.get(g) ?? 0) + dt);
      const c = categoryOf(n.callFrame.url, n.callFrame.functionName);
      categories.set(c, (categories.get(c) ?? 0) + dt);
      const name = `${n.callFrame.functionName || '(anonymous)'} ${n.callFrame.url.replace(/^.*(node_modules|\.bench-build)\//, '')}:${n.callFrame.lineNumber + 1}`;
      functions.set(name, (functions.get(name) ?? 0) + dt);
    }
  }
  return { groups, functions, categories };
}

/** Markdown: the groups' and the top functions' shares of the busy (non-idle) self time. */
export function summarizeProfiles(dir: string, top = 25): string {
  const { groups, functions, categories } = selfTimes(dir);
  const busy = [...groups].filter(([g]) => g !== 'idle').reduce((s, [, t]) => s + t, 0);
  const rows = (m: Map<string, number>, skipIdle: boolean): string[] =>
    [...m]
      .filter(([k]) => !(skipIdle && (k === 'idle' || k.startsWith('(idle)'))))
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(
        ([k, t]) => `| ${k.replace(/\|/g, '\\|')} | ${((100 * t) / busy).toFixed(1)} % | ${(t / 1000).toFixed(0)} |`,
      );
  return `Self time of the busy (non-idle) CPU time, ${(busy / 1e6).toFixed(1)} s in all, by cost centre:

| cost centre | share | ms |
|---|---|---|
${rows(categories, true).join('\n')}

By code:

| code | share | ms |
|---|---|---|
${rows(groups, true).join('\n')}

Top functions:

| function | share | ms |
|---|---|---|
${rows(functions, true).join('\n')}`;
}

if (require.main === module) console.log(summarizeProfiles(process.argv[2] ?? '.'));
