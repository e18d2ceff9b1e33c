/**
 * Gateway CPU per request of several builds of the gateway, run in turn over the in-memory
 * benchmark's set-up (bench/inmem-setup.ts): for deciding whether a change pays when the machine
 * is too busy for throughput figures to compare. Each build is a copy of `.bench-build/` at the
 * checkout's top level (so it finds package.json and schema/ as the build does), e.g.
 *
 *   cp -r .bench-build .bench-build-before   (after a run of bench/inmemory.ts on each version)
 *   node --import tsx bench/inmem-ab.ts .bench-build-before .bench-build
 *
 * It starts each build pinned to CPU 0 with the load generator on CPU 1, sends sequential requests
 * (one connection) of the list and of volume(id) after a warm-up, and reads the gateway's CPU time
 * from /proc. INMEM_AB_ROUNDS (default 3) rounds, INMEM_AB_REQUESTS (default 600) per query.
 * A build given as `dir,NAME=value,…` runs with those settings over the set-up's, e.g.
 * `.bench-build,OTEL_SDK_DISABLED=true` (tracing not loaded).
 */
import { median } from './load';
import { once } from 'node:events';
import { join } from 'node:path';
import { GATEWAY_ENV, MEMORY_LIST, READY_WITH_TRACING, TOKEN_HEADER } from './inmem-setup';
import { pinnedLoad } from './pinned-load';
import { cpuMs, killStarted, startCompiled } from './processes';
import { ONE_VOLUME } from './queries';

const builds = process.argv.slice(2);
const rounds = Number(process.env.INMEM_AB_ROUNDS ?? 3);
const requests = Number(process.env.INMEM_AB_REQUESTS ?? 600);

async function startBuild(spec: string): Promise<{ pid: number; url: string; stop: () => Promise<void> }> {
  const [dir, ...settings] = spec.split(',');
  const env = {
    ...GATEWAY_ENV,
    ...Object.fromEntries(settings.map((s) => [s.slice(0, s.indexOf('=')), s.slice(s.indexOf('=') + 1)])),
  };
  // "tracing on" is an info line: without tracing, or below info, the ready line alone.
  const ready =
    env.OTEL_SDK_DISABLED === 'true' || !['info', 'debug', 'trace'].includes(env.LOG_LEVEL ?? 'info')
      ? /ready at (\S+)/
      : READY_WITH_TRACING;
  const { child, match } = await startCompiled(join(dir!, 'server/main.js'), env, ready, [], '0');
  const url = match[1]!.replace('localhost', '127.0.0.1');
  return {
    pid: child.pid!,
    url,
    stop: async () => void (child.kill('SIGINT'), child.exitCode === null && (await once(child, 'exit'))),
  };
}

async function main(): Promise<void> {
  const cpu: Record<string, Record<string, number[]>> = {};
  for (let r = 0; r < rounds; r++) {
    for (const b of builds) {
      const g = await startBuild(b);
      const listed = (await (
        await fetch(g.url, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ query: '{ volumes(first: 50) { nodes { id } } }' }),
        })
      ).json()) as { data: { volumes: { nodes: Array<{ id: string }> } } };
      const bodies = {
        list: JSON.stringify({ query: MEMORY_LIST }),
        'volume(id)': JSON.stringify({ query: ONE_VOLUME, variables: { id: listed.data.volumes.nodes[42]!.id } }),
      };
      for (const [name, body] of Object.entries(bodies)) {
        const n = name === 'list' ? requests : requests * 4;
        await pinnedLoad(
          {
            url: g.url,
            headers: { 'content-type': 'application/json', ...TOKEN_HEADER },
            body,
            graphql: true,
            connections: 1,
            requests: n / 2,
            warmup: 0,
          },
          '1',
        );
        const c0 = cpuMs(g.pid);
        const load = await pinnedLoad(
          {
            url: g.url,
            headers: { 'content-type': 'application/json', ...TOKEN_HEADER },
            body,
            graphql: true,
            connections: 1,
            requests: n,
            warmup: 0,
          },
          '1',
        );
        const per = (cpuMs(g.pid) - c0) / n;
        ((cpu[b] ??= {})[name] ??= []).push(per);
        console.log(`round ${r} ${b} ${name}: ${per.toFixed(3)} ms CPU/request, ${load.throughput.toFixed(0)} req/s`);
      }
      await g.stop();
    }
  }
  console.log('\n| build | query | CPU ms/request, median (each round) |\n|---|---|---|');
  for (const b of builds)
    for (const [q, xs] of Object.entries(cpu[b]!))
      console.log(`| ${b} | ${q} | ${median(xs).toFixed(3)} (${xs.map((x) => x.toFixed(3)).join(', ')}) |`);
}

main()
  .catch((e) => {
    console.error(e);
    process.exitCode = 1;
  })
  .finally(killStarted);
