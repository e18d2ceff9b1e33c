/**
 * The fuzz driver: for each property, a fresh world (simulators + in-process gateway), the
 * schema read by introspection, generators built from it, and fast-check feeding one HTTP
 * request per run through the oracle. After each property the gateway must still answer
 * `/healthz`, `/readyz` and a plain read on every backend.
 */
import fc from 'fast-check';
import { isUnionType, type GraphQLSchema } from 'graphql';
import { HostileDocuments } from './hostile-documents';
import { exchange, type RawRequest } from './http-client';
import { InputValues } from './input-values';
import { introspect } from './introspection';
import { errorCodes, findings, mb, type Finding } from './oracle';
import { ProcessWatch } from './process-watch';
import { FindingsError, newStats, summarize, type PropertyReport, type Stats } from './report';
import { graphqlRequest, headerCases, labelled, operationCases, rawCases, type FuzzCase } from './requests';
import type { BackendCall } from './route-table';
import { hasArguments, needsNoArguments, oneHostileSlot, SchemaArbitraries } from './schema-arbitraries';
import type { FuzzSettings, PropertyName } from './settings';
import { NOMAD_ID, OPENSTACK_ID, startWorld, type Vocabulary, type World } from './world';

/** Federation entity types of the schema: the members of `_Entity` (none when it is not a subgraph). */
export function entityTypes(schema: GraphQLSchema): string[] {
  const entity = schema.getType('_Entity');
  return isUnionType(entity) ? entity.getTypes().map((t) => t.name) : [];
}

/** Backend requests logged by both simulators since the last call, in one shape; the logs are cleared. */
export function takeBackendCalls(w: World): BackendCall[] {
  const nomad = w.nomad
    .requests()
    .map((r): BackendCall => ({ service: 'nomad', method: r.method, path: r.path, query: r.query, status: r.status }));
  const os = w.openstack.sim.requests().map((r): BackendCall => ({
    service: r.service,
    method: r.method,
    path: r.path,
    query: r.params,
    status: r.status,
  }));
  w.nomad.clearRequests();
  w.openstack.sim.clearRequests();
  return [...nomad, ...os];
}

function casesFor(
  name: PropertyName,
  v: Vocabulary,
  s: SchemaArbitraries,
  settings: FuzzSettings,
): fc.Arbitrary<FuzzCase> {
  const reaching = s.operation(needsNoArguments, 2);
  switch (name) {
    case 'documents':
      return operationCases(
        fc.oneof(labelled('operation', s.operation()), labelled('argument-free operation', reaching)),
        v,
      );
    case 'hostile-documents':
      return operationCases(new HostileDocuments(s, v, settings.hostile).any(), v);
    case 'arguments':
      return operationCases(fc.oneof(labelled('arguments', s.operation(hasArguments, 1)), oneHostileSlot(s, v)), v);
    case 'headers':
      return headerCases(reaching, v);
    case 'raw':
      return rawCases(s.operation(), v, 1_048_576);
  }
}

/** Sends one case and returns what the oracle found (ignored kinds removed). */
async function observe(
  c: FuzzCase,
  w: World,
  watch: ProcessWatch,
  settings: FuzzSettings,
  stats: Stats,
): Promise<Finding[]> {
  takeBackendCalls(w); // calls made after the previous answer (operation pollers) are not this case's
  const rssBefore = watch.startPeak();
  const result = await exchange(w.origin, c.request, settings.client);
  // Let rejections of work the request left behind surface before judging.
  await new Promise((r) => setTimeout(r, 0));
  const calls = takeBackendCalls(w);
  const rss = watch.peakRss();
  stats.requests++;
  stats.backendCalls += calls.length;
  if (result.durationMs > stats.slowestMs) {
    stats.slowestMs = result.durationMs;
    stats.slowest = `${c.label}: ${c.request.method} ${c.request.target} ${(c.request.body ?? '').slice(0, 200)}`;
  }
  stats.msByLabel[c.label] = (stats.msByLabel[c.label] ?? 0) + result.durationMs;
  stats.maxRssMb = Math.max(stats.maxRssMb, Math.round(rss / 1_048_576));
  const status = result.response ? String(result.response.status) : (result.failure?.kind ?? '?');
  stats.statuses[status] = (stats.statuses[status] ?? 0) + 1;
  for (const code of result.response ? errorCodes(result.response.text) : [])
    stats.codes[code] = (stats.codes[code] ?? 0) + 1;
  const found = findings({
    result,
    calls,
    processErrors: watch.takeErrors(),
    rssBeforeBytes: rssBefore,
    rssBytes: rss,
    rssLimitBytes: watch.rssLimitBytes,
  });
  return found.filter((f) => !settings.ignore.has(f.kind));
}

/** What must still work after a property: the process, readiness, and a plain read per backend. */
export async function stillServing(w: World, settings: FuzzSettings): Promise<string[]> {
  const problems: string[] = [];
  const get = (target: string): RawRequest => ({ method: 'GET', target, headers: [] });
  const health = await exchange(w.origin, get('/healthz'), settings.client);
  if (health.response?.status !== 200)
    problems.push(`/healthz: ${health.response?.status ?? JSON.stringify(health.failure)}`);
  const ready = await exchange(w.origin, get('/readyz'), settings.client);
  if (ready.response?.status !== 200)
    problems.push(
      `/readyz: ${ready.response?.status ?? JSON.stringify(ready.failure)} ${ready.response?.text.slice(0, 300) ?? ''}`,
    );
  // The one place that names fields (schema v2): a merged list filtered to one backend.
  const reads: Array<[string, string]> = [
    [NOMAD_ID, `{ volumes(first: 5, filter: { backends: ["${NOMAD_ID}"] }) { nodes { id } } }`],
    [OPENSTACK_ID, `{ volumes(first: 5, filter: { backends: ["${OPENSTACK_ID}"] }) { nodes { id } } }`],
  ];
  for (const [backend, query] of reads) {
    const r = await exchange(
      w.origin,
      graphqlRequest({ query }, Object.entries(w.vocabulary.credentials[0]!)),
      settings.client,
    );
    const body = r.response
      ? (JSON.parse(r.response.text) as { data?: { volumes?: { nodes?: unknown[] } }; errors?: unknown })
      : undefined;
    if (!body?.data?.volumes?.nodes?.length || body.errors)
      problems.push(
        `backend ${backend} no longer answers a plain read: ${r.response?.text.slice(0, 400) ?? JSON.stringify(r.failure)}`,
      );
  }
  const calls = takeBackendCalls(w);
  if (!calls.some((c) => c.service === 'nomad') || !calls.some((c) => c.service === 'cinder'))
    problems.push('the plain reads did not reach both simulators');
  return problems;
}

/** Runs one property against a fresh world; returns its report (never throws for findings). */
export async function runProperty(name: PropertyName, settings: FuzzSettings, replay: string): Promise<PropertyReport> {
  const world = await startWorld();
  const watch = new ProcessWatch(settings.rssCeilingBytes, settings.rssHeadroomBytes);
  const stats = newStats();
  try {
    const schema = await introspect(world.origin, world.vocabulary.credentials[0]);
    const vocabulary: Vocabulary = { ...world.vocabulary, entityTypes: entityTypes(schema) };
    const s = new SchemaArbitraries(schema, new InputValues(vocabulary), settings.documents);
    const property = fc.asyncProperty(casesFor(name, vocabulary, s, settings), async (c) => {
      const found = await observe(c, world, watch, settings, stats);
      if (found.length > 0) throw new FindingsError(found);
    });
    const details = (await fc.check(property, {
      seed: settings.seed,
      ...(settings.path ? { path: settings.path } : {}),
      numRuns: settings.runs[name],
      plugins: [fc.interruptAfterTimeLimit(settings.timeLimitMs)],
    })) as fc.RunDetails<[FuzzCase]>;
    const report = summarize(
      name,
      details,
      stats,
      `FUZZ_SEED=<SEED> FUZZ_PATH=<PATH> FUZZ_ONLY=${name}${settings.ignore.size ? ` FUZZ_IGNORE=${[...settings.ignore].join(',')}` : ''} ${replay}`,
    );
    const after = await stillServing(world, settings);
    const rssNow = process.memoryUsage().rss;
    if (rssNow > watch.rssLimitBytes && !settings.ignore.has('rss'))
      after.push(`RSS ${mb(rssNow)} MB at the end, over the bound of ${mb(watch.rssLimitBytes)} MB`);
    const late = watch.takeErrors();
    if (after.length > 0 || late.length > 0) {
      const extra = [...after, ...late.map((e) => `${e.kind}: ${e.message}`)];
      return {
        ...report,
        ok: false,
        text: `${report.text}\nafter the run:\n${extra.map((x) => `  - ${x}`).join('\n')}`,
      };
    }
    return report;
  } finally {
    watch.stop();
    await world.dispose().catch((err: unknown) => {
      console.error(`fuzz "${name}": ${(err as Error).message}`);
    });
  }
}
