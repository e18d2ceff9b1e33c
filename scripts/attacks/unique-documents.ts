/**
 * R15 of docs/reliability.md against a running gateway: unique valid documents. Each document an
 * anonymous client sends is new text (a fresh name in the filter), so each is parsed, validated
 * and, with compiled execution, compiled anew. Sends a flood of documents seen once, then one of
 * documents each sent twice (the second sighting is compiled), then one document many times (the
 * fast path), and reads the gateway's own /metrics around each: heap used and RSS (prom-client's
 * process metrics), the compiled documents it holds and their estimated bytes, evictions, and
 * `gateway_executions_total` by engine and reason.
 *
 * The documents ask for OpenStack volumes only, which need a credential the anonymous client does
 * not send: the answer is an empty page naming `openstack` as NO_CREDENTIAL, and no backend is
 * called. The client keeps to the per-caller rate (200 requests/s by default: it waits out each
 * 429), so the run takes about 30 s. Meant for `npm run attacks` (scripts/replay-attacks.ts) against
 * the demo.
 *
 * Heap used is what /metrics reads at the time (garbage not yet collected included); the figures of
 * docs/reliability.md after a forced GC were taken with the gateway started under `--expose-gc`.
 */
import { randomBytes } from 'node:crypto';

/** Requests in flight at once: well under the per-address limit (256). */
const PARALLEL = 8;
/** Times one request is sent again after a 429. */
const MAX_RETRIES = 30;
const MiB = 1_048_576;

export interface UniqueDocumentsOptions {
  /** Documents sent once each. @default 4,000 */
  once?: number;
  /** Documents sent twice each. @default 1,000 */
  twice?: number;
}

/** A valid anonymous list, new text for every `tag`. */
const documentFor = (tag: string): string =>
  `query { volumes(first: 20, filter: { backends: ["openstack"], name: "${tag}" }) { nodes { id backend { id } namespace nativeId name status backendStatus sizeBytes createdAt updatedAt attachments { id state stateReason backendState device attachedAt } } pageInfo { hasNextPage endCursor } omittedBackends { backend { id } reason code } } }`;

interface Reading {
  heap: number;
  rss: number;
  /** Compiled documents held and their estimated bytes (undefined: the gateway has no such gauge). */
  held?: number;
  heldBytes?: number;
  evicted?: number;
  executions: Record<string, number>;
}

/**
 * Replays R15 against the gateway at `base` (`http://host:port`, with or without `/graphql`) and
 * returns the rows of a Markdown table (header first), ready to print.
 */
export async function replayUniqueDocuments(base: string, o: UniqueDocumentsOptions = {}): Promise<string[]> {
  const root = base.replace(/\/+$/, '').replace(/\/graphql$/, '');
  const run = randomBytes(4).toString('hex');
  // At the pace the per-caller limit allows (429: wait its Retry-After, then send the same again).
  const post = async (query: string): Promise<number> => {
    for (let attempt = 0; ; attempt++) {
      const res = await fetch(`${root}/graphql`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ query }),
        signal: AbortSignal.timeout(60_000),
      });
      await res.arrayBuffer();
      if (res.status !== 429 || attempt === MAX_RETRIES) return res.status;
      await new Promise((r) => setTimeout(r, 1000 * Math.min(5, Number(res.headers.get('retry-after')) || 1)));
    }
  };
  const read = async (): Promise<Reading> => {
    const text = await (await fetch(`${root}/metrics`)).text();
    const one = (name: string): number | undefined => {
      let sum: number | undefined;
      for (const m of text.matchAll(new RegExp(`^${name}(?:\\{[^}]*\\})? (\\S+)$`, 'gm')))
        sum = (sum ?? 0) + Number(m[1]);
      return sum;
    };
    const executions: Record<string, number> = {};
    for (const m of text.matchAll(/^gateway_executions_total\{engine="([^"]+)",reason="([^"]+)"\} (\S+)$/gm))
      executions[`${m[1]}/${m[2]}`] = Number(m[3]);
    return {
      heap: one('nodejs_heap_size_used_bytes') ?? 0,
      rss: one('process_resident_memory_bytes') ?? 0,
      held: one('gateway_compiled_documents'),
      heldBytes: one('gateway_compiled_documents_bytes'),
      evicted: one('gateway_compiled_documents_evicted_total'),
      executions,
    };
  };
  const send = async (queries: string[]): Promise<{ statuses: Record<number, number>; seconds: number }> => {
    const statuses: Record<number, number> = {};
    const started = performance.now();
    for (let i = 0; i < queries.length; i += PARALLEL) {
      for (const s of await Promise.all(queries.slice(i, i + PARALLEL).map((q) => post(q).catch(() => 0))))
        statuses[s] = (statuses[s] ?? 0) + 1;
    }
    return { statuses, seconds: (performance.now() - started) / 1000 };
  };
  const mib = (n: number): string => (n / MiB).toFixed(0);
  const delta = (a: Reading, b: Reading): string =>
    Object.keys(b.executions)
      .map((k) => [k, b.executions[k]! - (a.executions[k] ?? 0)] as const)
      .filter(([, n]) => n > 0)
      .map(([k, n]) => `${k} ${n}`)
      .join(', ') || 'none';
  const row = (
    attack: string,
    sent: { statuses: Record<number, number>; seconds: number },
    a: Reading,
    b: Reading,
  ): string =>
    `| ${attack} (HTTP ${JSON.stringify(sent.statuses)}, ${sent.seconds.toFixed(1)} s) | ${mib(a.heap)} → ${mib(b.heap)} | ${mib(a.rss)} → ${mib(b.rss)} | ${b.held === undefined ? 'not reported' : `${b.held}, ${mib(b.heldBytes ?? 0)} MiB`} | ${b.evicted === undefined ? 'not reported' : b.evicted - (a.evicted ?? 0)} | ${delta(a, b)} |`;

  const once = o.once ?? 4_000;
  const twice = o.twice ?? 1_000;
  const rows = [
    '| R15 attack | heap used MiB | RSS MiB | compiled documents held, estimated bytes | evicted | executions (engine/reason) |',
    '|---|---|---|---|---|---|',
  ];
  const r0 = await read();
  const a = await send(Array.from({ length: once }, (_, i) => documentFor(`r15-${run}-once-${i}`)));
  const r1 = await read();
  rows.push(row(`${once} unique documents, each sent once`, a, r0, r1));
  const pairs = Array.from({ length: twice }, (_, i) => documentFor(`r15-${run}-twice-${i}`));
  const b = await send(pairs.flatMap((q) => [q, q]));
  const r2 = await read();
  rows.push(row(`${twice} unique documents, each sent twice`, b, r1, r2));
  const same = documentFor(`r15-${run}-repeated`);
  const c = await send(Array.from({ length: 50 }, () => same));
  const r3 = await read();
  rows.push(row('then one document 50 times', c, r2, r3));
  return rows;
}
