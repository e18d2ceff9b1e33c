/**
 * Issue 27, item 2 (docs/reliability.md R15): a flood of unique valid documents against compiled
 * execution, judged by the fuzz test's own memory rule (test/fuzz/settings.ts: RSS below 1.5 GB and
 * below the RSS at the start plus 600 MB). Each compiled document held about 170 KiB to 1 MiB, and
 * Apollo's document store, which bounded them, counts only the parsed document.
 *
 * The gateway runs as a child process (`server/main.ts` over a memory backend, the shipped
 * compiled-document settings, no rate limit) under `--expose-gc`, with a preloaded hook that
 * answers SIGUSR2 with a full GC and the heap used after it on stderr. Its RSS is sampled from
 * /proc while the flood runs; the flood stops as soon as the rule is broken.
 */
import { readFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startGatewayProcess } from '../support/gateway-process';
import { until } from '../support/until';
import { fuzzSettings } from './settings';

const MiB = 1_048_576;
/** Unique documents sent once each, then unique documents sent twice each (compiled at the second). */
const ONCE = 1_000;
const TWICE = 250;
const PARALLEL = 8;
/** COMPILED_DOCUMENTS_MAX_BYTES's default. */
const BUDGET = 64 * MiB;
/**
 * What the heap may add after a full GC besides the compiled documents' budget: Apollo's store of
 * parsed documents (30 MiB of their JSON, about 4 bytes of heap per character: 120 MiB), the
 * record of sightings (4 MiB) and slack for the rest.
 */
const OTHER_HEAP = 160 * MiB;

const work = mkdtempSync(join(tmpdir(), 'unique-documents-'));
const hook = join(work, 'gc-on-sigusr2.cjs');
writeFileSync(
  hook,
  "process.on('SIGUSR2', () => { global.gc(); global.gc(); process.stderr.write('heap-after-gc ' + process.memoryUsage().heapUsed + '\\n'); });\n",
);
afterAll(() => rmSync(work, { recursive: true, force: true }));

const VOLUME =
  'id backend { id } namespace nativeId name status backendStatus sizeBytes createdAt updatedAt attachments { id state stateReason backendState device attachedAt }';
/** A valid document of five aliased lists (within the alias, depth and cost limits), new text for every `tag`. */
const documentFor = (tag: string): string =>
  `{ ${Array.from({ length: 5 }, (_, a) => `a${a}: volumes(first: 10, filter: { name: "${tag}-${a}" }) { nodes { ${VOLUME} } pageInfo { hasNextPage endCursor } }`).join(' ')} }`;

const rssOf = (pid: number, field: 'VmRSS' | 'VmHWM'): number =>
  Number(new RegExp(`${field}:\\s+(\\d+)`).exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) * 1024;

test('a flood of unique valid documents stays within the fuzz rule, and repeated ones still run compiled', async () => {
  const gateway = startGatewayProcess(
    {
      GATEWAY_BACKENDS: 'lab=memory',
      LOG_LEVEL: 'warn',
      RATE_LIMIT_CALLER_RPS: '0',
      RATE_LIMIT_CALLER_IN_FLIGHT: '0',
      RATE_LIMIT_ADDRESS_RPS: '0',
      RATE_LIMIT_ADDRESS_IN_FLIGHT: '0',
    },
    { nodeArgs: ['--expose-gc', '--require', hook] },
  );
  try {
    const url = (await gateway.serving()).replace('localhost', '127.0.0.1');
    const pid = gateway.child.pid!;
    const post = async (query: string): Promise<{ status: number; body: any }> => {
      const res = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ query }),
      });
      return { status: res.status, body: await res.json() };
    };
    const metrics = async (): Promise<string> => (await fetch(url.replace('/graphql', '/metrics'))).text();
    const sample = (text: string, series: string): number =>
      Number(new RegExp(`^${series.replace(/[{}"]/g, '\\$&')} (\\S+)$`, 'm').exec(text)?.[1] ?? 0);
    const heapAfterGc = async (): Promise<number> => {
      const before = gateway.errors().split('heap-after-gc').length;
      gateway.child.kill('SIGUSR2');
      await until(
        () => gateway.errors().split('heap-after-gc').length > before,
        'the heap after a full GC',
        30_000,
        20,
      );
      return Number([...gateway.errors().matchAll(/heap-after-gc (\d+)/g)].at(-1)![1]);
    };

    // Warm: the first requests load code the flood would otherwise be charged for.
    for (let i = 0; i < 20; i++) expect((await post(documentFor(`warm-${i % 2}`))).status).toBe(200);
    const heap0 = await heapAfterGc();
    const rss0 = rssOf(pid, 'VmRSS');
    const rule = fuzzSettings('short');
    const rssLimit = Math.min(rule.rssCeilingBytes, rss0 + rule.rssHeadroomBytes);
    const m0 = await metrics();

    let peak = rss0;
    const sampler = setInterval(() => (peak = Math.max(peak, rssOf(pid, 'VmRSS'))), 50);
    const statuses: Record<number, number> = {};
    let notData = 0;
    const send = async (queries: string[]): Promise<void> => {
      for (let i = 0; i < queries.length && peak <= rssLimit; i += PARALLEL) {
        for (const r of await Promise.all(queries.slice(i, i + PARALLEL).map(post))) {
          statuses[r.status] = (statuses[r.status] ?? 0) + 1;
          if (r.body.errors || !r.body.data?.a4) notData++;
        }
      }
    };
    try {
      await send(Array.from({ length: ONCE }, (_, i) => documentFor(`once-${i}`)));
      await send(Array.from({ length: TWICE }, (_, i) => documentFor(`twice-${i}`)).flatMap((q) => [q, q]));
    } finally {
      clearInterval(sampler);
    }
    peak = Math.max(peak, rssOf(pid, 'VmRSS'));
    const heap1 = await heapAfterGc();
    const m1 = await metrics();
    console.log(
      `R15: ${ONCE} documents once, ${TWICE} twice: RSS ${(rss0 / MiB).toFixed(0)} → peak ${(peak / MiB).toFixed(0)} MiB (limit ${(rssLimit / MiB).toFixed(0)}), ` +
        `heap after GC ${(heap0 / MiB).toFixed(0)} → ${(heap1 / MiB).toFixed(0)} MiB, compiled kept ${sample(m1, 'gateway_compiled_documents{trusted="false"}')} ` +
        `(${(sample(m1, 'gateway_compiled_documents_bytes{trusted="false"}') / MiB).toFixed(1)} MiB estimated), evicted ${sample(m1, 'gateway_compiled_documents_evicted_total')}`,
    );

    // The fuzz rule, and the heap a full GC leaves: the budget plus Apollo's own store.
    expect({ peakRssMiB: Math.round(peak / MiB), withinRule: peak <= rssLimit }).toEqual({
      peakRssMiB: Math.round(peak / MiB),
      withinRule: true,
    });
    expect(heap1 - heap0).toBeLessThan(BUDGET + OTHER_HEAP);
    expect({ statuses, notData }).toEqual({ statuses: { 200: ONCE + 2 * TWICE }, notData: 0 });

    // What ran where: every first sighting on graphql-js, every second compiled.
    const ran = (series: string): number => sample(m1, series) - sample(m0, series);
    expect(ran('gateway_executions_total{engine="graphql-js",reason="first-sighting"}')).toBe(ONCE + TWICE);
    expect(ran('gateway_executions_total{engine="compiled",reason="none"}')).toBe(TWICE);
    // The budget held, by dropping the least recently used.
    expect(sample(m1, 'gateway_compiled_documents_bytes{trusted="false"}')).toBeLessThanOrEqual(BUDGET);
    expect(ran('gateway_compiled_documents_evicted_total')).toBeGreaterThan(0);

    // The fast path: the latest repeated document is still kept and runs compiled again.
    expect((await post(documentFor(`twice-${TWICE - 1}`))).status).toBe(200);
    const m2 = await metrics();
    expect(
      sample(m2, 'gateway_executions_total{engine="compiled",reason="none"}') -
        sample(m1, 'gateway_executions_total{engine="compiled",reason="none"}'),
    ).toBe(1);
  } finally {
    await gateway.stop();
  }
}, 120_000);
