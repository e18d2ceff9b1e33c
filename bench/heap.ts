/**
 * Benchmark: the JS heap one live subscription costs, by kind of object. The compiled gateway (as
 * `npm start` runs it) over a simulated Nomad takes a few warm-up subscriptions, then writes a heap
 * snapshot (`--heapsnapshot-signal`; V8 collects garbage before it writes), then takes N more
 * subscriptions from a load-generator process (bench/fanout-clients.ts, the fan-out benchmark's
 * query) and writes another. The difference divided by N is what each subscription holds (RSS per
 * subscription is the fan-out benchmark's: the snapshots themselves move RSS). Figures go to
 * bench/RESULTS.md (section `heap`).
 *
 *   node --import tsx bench/heap.ts      (part of `npm run bench`)
 *   HEAP_SHORT=1                         100 subscriptions instead of 2,000 (npm run bench; its check mode, in
 *                                        the test suite: 20, bench/quick.ts)
 *   HEAP_SUBSCRIPTIONS=n                 any other count
 *   HEAP_INIT_TIMEOUT_MS=n               the gateway's connection_init timeout, waited out before the
 *                                        second snapshot (default 6000)
 *   BENCH_OUT=path                       write the results elsewhere
 */
import { once } from 'node:events';
import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { claimsSubscription, forkClients, open, type Opened } from './clients';
import { BENCH_TOKEN, UNCAPPED, watchedNomad } from './constants';
import { kindTotals, perUnit, type KindTotal } from './heap-snapshot';
import { killStarted, machineFacts, start, startBuiltGateway, wsUrlOf } from './processes';
import { writeSection } from './results-file';

const short = process.env.HEAP_SHORT === '1';
const n = Number(process.env.HEAP_SUBSCRIPTIONS ?? (short ? 100 : 2_000));
const out = process.env.BENCH_OUT ?? join(__dirname, 'RESULTS.md');
const WARMUP = 50;
const TOP = 15;

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
/**
 * The gateway's connection_init timeout here (its default is 10 s): long enough for every client
 * to send its init under the benchmark's load, short enough to wait out before the second snapshot.
 */
const INIT_TIMEOUT_MS = Number(process.env.HEAP_INIT_TIMEOUT_MS ?? 6_000);

/** Signals the gateway to write a snapshot into `dir` and waits until the file is whole. */
async function snapshot(pid: number, dir: string): Promise<Map<string, KindTotal>> {
  const before = new Set(readdirSync(dir));
  process.kill(pid, 'SIGUSR2');
  const deadline = Date.now() + 120_000;
  let file: string | undefined;
  let size = -1;
  while (Date.now() < deadline) {
    await sleep(100);
    file ??= readdirSync(dir).find((f) => f.endsWith('.heapsnapshot') && !before.has(f));
    if (!file) continue;
    const now = statSync(join(dir, file)).size;
    if (now > 0 && now === size) {
      // Whole once it parses: a cut-off snapshot cannot (its outermost object closes last). A
      // pause in the writing only costs a parse.
      try {
        const totals = kindTotals(join(dir, file));
        rmSync(join(dir, file));
        return totals;
      } catch (err) {
        if (!(err instanceof SyntaxError)) throw err;
      }
    }
    size = now;
  }
  throw new Error('the gateway wrote no heap snapshot within 2 minutes');
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'heap-'));
  const sim = await start(['bench/sim-server.ts'], {}, /SIM_URL=(\S+)/);
  const gw = await startBuiltGateway(
    {
      ...watchedNomad(sim.match[1]!),
      HOST: '127.0.0.1',
      PORT: '0',
      LOG_LEVEL: 'warn',
      ...UNCAPPED,
      WS_CONNECTION_INIT_TIMEOUT_MS: String(INIT_TIMEOUT_MS),
    },
    /ready at (\S+)/,
    ['--heapsnapshot-signal=SIGUSR2', `--diagnostic-dir=${dir}`],
  );
  const pid = gw.child.pid!;
  const wsUrl = wsUrlOf(gw.match[1]!);
  const query = claimsSubscription('bench-001');
  const clients = forkClients();
  const subscribe = (count: number): Promise<Opened> =>
    open(clients, {
      url: wsUrl,
      count,
      sources: ['127.0.0.1', '127.0.0.2'],
      init: [{ 'X-Nomad-Token': BENCH_TOKEN }],
      batch: 200,
      query,
    });

  // Warm-up: the first subscriptions compile code and fill caches that later ones share.
  const warm = await subscribe(WARMUP);
  if (warm.opened !== WARMUP) throw new Error(`warm-up: ${warm.failed} of ${WARMUP} subscriptions failed`);
  await sleep(1_000);
  const before = await snapshot(pid, dir);
  const opened = await subscribe(n);
  if (opened.opened !== n) throw new Error(`${opened.failed} of ${n} subscriptions failed`);
  // graphql-ws clears its connection_init timer (one per socket) only when the socket closes; it
  // runs out after WS_CONNECTION_INIT_TIMEOUT_MS (INIT_TIMEOUT_MS here) and is not part of what a
  // subscription holds. The wait lets the last socket's timer run out before the second snapshot.
  await sleep(INIT_TIMEOUT_MS + 500);
  const after = await snapshot(pid, dir);
  clients.send({ close: true });
  await once(clients, 'exit');

  const rows = perUnit(before, after, n);
  const total = rows.reduce((s, r) => s + r.bytes, 0);
  const kib = (b: number): string => (b / 1024).toFixed(1);
  // Read from every kind, not the table: at about 220 bytes the WebSocket row sits near the cut of
  // the top 15 (TOP), and code compiled between the snapshots can push it out.
  const sockets = rows.find((r) => r.kind === 'object:WebSocket')?.count ?? 0;
  console.log(`${n} subscriptions: JS heap ${kib(total)} KiB each`);
  const table = rows
    .slice(0, TOP)
    .map((r) => `| \`${r.kind}\` | ${r.count.toFixed(2)} | ${r.bytes.toFixed(0)} |`)
    .join('\n');
  writeSection(
    out,
    'heap',
    `## Heap per subscription

Generated by \`bench/heap.ts\` on ${new Date().toISOString()}.

${machineFacts()}

Setup: the compiled gateway over a simulated Nomad, watched with its service token; ${WARMUP}
warm-up subscriptions, a heap snapshot (V8 collects garbage first), ${n} more subscriptions (the
fan-out benchmark's \`volumeChanged\` query, one per socket, from a load-generator process), then
another snapshot. Per subscription: the difference divided by ${n}, by kind of object (\`type:name\`,
as the snapshot names them; strings and code by type alone). Self sizes, so each object counts once.

**JS heap per subscription: ${kib(total)} KiB.** WebSocket objects per subscription (one socket
each): ${sockets.toFixed(2)}. RSS per subscription (which also holds native
socket state and heap slack) is in the fan-out section.

| kind | objects per subscription | bytes per subscription |
|---|---|---|
${table}
`,
  );
  console.log(`wrote ${out}`);
  gw.child.kill('SIGTERM');
  sim.child.kill('SIGTERM');
  rmSync(dir, { recursive: true, force: true });
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    console.error(err);
    killStarted();
    process.exit(1);
  },
);
