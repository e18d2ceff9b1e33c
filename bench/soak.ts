/**
 * Soak: does the gateway give back what each request and subscription took? One compiled gateway
 * (as `npm start` runs it) over a simulated Nomad, watched with its service token, takes rounds of
 * HTTP queries (reads, a missing volume, a refused document) and graphql-ws sessions (connect,
 * subscribe, receive SUBSCRIBED, then complete or hang up abruptly). After each round it idles,
 * then its heap and RSS are read: a leak shows as growth that keeps pace with the rounds, a healthy
 * process levels off after the first ones. Figures go to bench/RESULTS.md (section `soak`).
 *
 *   npm run soak                       10 rounds of 20,000 requests and 2,000 sessions
 *   SOAK_SHORT=1 npm run soak          2 rounds of 400 and 100 (npm run bench; its check mode, in the
 *                                      test suite: 30 and 8, bench/quick.ts)
 *   SOAK_ROUNDS, SOAK_REQUESTS, SOAK_SESSIONS   override the round shape
 *   SOAK_IDLE_MS=n                     the idle before each reading (default 5000, short 1000)
 *   BENCH_OUT=path                     write the results elsewhere
 *
 * It fails (exit 1) on a request or session that did not end as expected, or a gateway that died;
 * memory growth is reported, not judged (compare rounds within one run).
 */
import { once } from 'node:events';
import { join } from 'node:path';
import { Pool } from 'undici';
import WebSocket from 'ws';
import { encodeGlobalId } from '../adapters/contract/ids';
import { BENCH_TOKEN, UNCAPPED, watchedNomad } from './constants';
import { runLoad } from './load';
import { killStarted, machineFacts, rssKiB, start, startBuiltGateway, wsUrlOf } from './processes';
import { ONE_VOLUME } from './queries';
import { writeSection } from './results-file';

const short = process.env.SOAK_SHORT === '1';
const rounds = Number(process.env.SOAK_ROUNDS ?? (short ? 2 : 10));
const requests = Number(process.env.SOAK_REQUESTS ?? (short ? 400 : 20_000));
const sessions = Number(process.env.SOAK_SESSIONS ?? (short ? 100 : 2_000));
const out = process.env.BENCH_OUT ?? join(__dirname, 'RESULTS.md');
const IDLE_MS = Number(process.env.SOAK_IDLE_MS ?? (short ? 1_000 : 5_000));

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
const rssMiB = (pid: number): number => rssKiB(pid) / 1024;
const mib = (n: number): string => n.toFixed(1);

/** One graphql-ws session: ack, SUBSCRIBED, then a clean `complete` + close, or an abrupt hang-up. */
function session(url: string, abrupt: boolean): Promise<void> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, 'graphql-transport-ws', { perMessageDeflate: false });
    const timer = setTimeout(() => {
      ws.terminate();
      reject(new Error('session timed out'));
    }, 15_000);
    const done = (err?: Error): void => {
      clearTimeout(timer);
      if (err) reject(err);
      else resolve();
    };
    ws.on('open', () =>
      ws.send(JSON.stringify({ type: 'connection_init', payload: { 'X-Nomad-Token': BENCH_TOKEN } })),
    );
    ws.on('message', (data: Buffer) => {
      const m = JSON.parse(data.toString()) as {
        type: string;
        payload?: { data?: { volumeChanged?: { type: string } } };
      };
      if (m.type === 'connection_ack')
        ws.send(
          JSON.stringify({
            id: '1',
            type: 'subscribe',
            payload: { query: 'subscription { volumeChanged { type cursor volume { id status } } }' },
          }),
        );
      else if (m.type === 'next' && m.payload?.data?.volumeChanged?.type === 'SUBSCRIBED') {
        if (abrupt) {
          ws.terminate();
          return done();
        }
        ws.send(JSON.stringify({ id: '1', type: 'complete' }));
        ws.close(1000);
      } else if (m.type === 'error') done(new Error(`subscription refused: ${data.toString().slice(0, 200)}`));
    });
    ws.on('close', (code) => (code === 1000 || abrupt ? done() : done(new Error(`closed with ${code}`))));
    ws.on('error', (err) => done(err));
  });
}

interface Round {
  round: number;
  requests: number;
  sessions: number;
  heapMiB: number;
  rssMiB: number;
}

async function main(): Promise<void> {
  const sim = await start(['bench/sim-server.ts'], {}, /SIM_URL=(\S+)/);
  const simUrl = sim.match[1]!;
  const gw = await startBuiltGateway(
    { ...watchedNomad(simUrl), HOST: '127.0.0.1', PORT: '0', LOG_LEVEL: 'warn', ...UNCAPPED },
    /ready at (\S+)/,
  );
  const pid = gw.child.pid!;
  let died: string | null = null;
  gw.child.once('exit', (code, signal) => (died = `gateway exited (${code ?? signal})`));
  const url = new URL(gw.match[1]!.replace('localhost', '127.0.0.1'));
  const wsUrl = wsUrlOf(gw.match[1]!);
  const pool = new Pool(url.origin, { connections: 16 });
  const headers = { 'content-type': 'application/json', 'x-nomad-token': BENCH_TOKEN };
  const post = async (body: unknown): Promise<{ status: number; json: any }> => {
    const res = await pool.request({ method: 'POST', path: url.pathname, headers, body: JSON.stringify(body) });
    return { status: res.statusCode, json: await res.body.json() };
  };
  const heapMiB = async (): Promise<number> => {
    const res = await pool.request({ method: 'GET', path: '/metrics' });
    const m = /^nodejs_heap_size_used_bytes (\S+)$/m.exec(await res.body.text());
    return Number(m?.[1] ?? NaN) / 2 ** 20;
  };

  const first = await post({ query: '{ volumes(first: 1) { nodes { id } } }' });
  const volumeId: string = first.json.data.volumes.nodes[0].id;
  const missing = encodeGlobalId({ kind: 'Volume', backend: 'bench', scope: 'default', nativeId: 'no-such-volume' });
  // Each kind of request must answer as it should, every time: a read, a miss, a refusal.
  const kinds: Array<() => Promise<void>> = [
    async () => {
      const r = await post({ query: ONE_VOLUME, variables: { id: volumeId } });
      if (r.status !== 200 || r.json.errors || !r.json.data.volume)
        throw new Error(`read: ${JSON.stringify(r.json).slice(0, 200)}`);
    },
    async () => {
      const r = await post({ query: ONE_VOLUME, variables: { id: missing } });
      if (r.status !== 200 || r.json.errors || r.json.data.volume !== null)
        throw new Error(`miss: ${JSON.stringify(r.json).slice(0, 200)}`);
    },
    async () => {
      const r = await post({ query: '{ volumes(first: 1) { nodes { nope } } }' });
      if (r.json.errors?.[0]?.extensions?.code !== 'GRAPHQL_VALIDATION_FAILED' || r.json.data !== undefined)
        throw new Error(`refusal: ${r.status} ${JSON.stringify(r.json).slice(0, 200)}`);
    },
  ];

  const rows: Round[] = [];
  await sleep(IDLE_MS);
  rows.push({ round: 0, requests: 0, sessions: 0, heapMiB: await heapMiB(), rssMiB: rssMiB(pid) });
  let sent = 0;
  let opened = 0;
  for (let r = 1; r <= rounds; r++) {
    let k = 0;
    const failures: string[] = [];
    const load = await runLoad(
      () =>
        kinds[k++ % kinds.length]!().catch((err: Error) => {
          failures.push(err.message);
          throw err;
        }),
      { connections: 16, requests, warmup: 0 },
    );
    if (load.errors > 0)
      throw new Error(
        `round ${r}: ${load.errors} of ${requests} requests did not answer as expected, e.g. ${[...new Set(failures.map((f) => f.slice(0, 300)))].slice(0, 3).join(' / ')}`,
      );
    sent += load.requests;
    for (let i = 0; i < sessions; i += 50) {
      await Promise.all(
        Array.from({ length: Math.min(50, sessions - i) }, (_, j) => session(wsUrl, (i + j) % 4 === 3)),
      );
    }
    opened += sessions;
    if (died) throw new Error(died);
    await sleep(IDLE_MS);
    rows.push({ round: r, requests: sent, sessions: opened, heapMiB: await heapMiB(), rssMiB: rssMiB(pid) });
    const last = rows.at(-1)!;
    console.log(
      `round ${r}: ${sent} requests, ${opened} sessions, heap ${mib(last.heapMiB)} MiB, RSS ${mib(last.rssMiB)} MiB`,
    );
  }

  // Growth per unit of work: least-squares slope from round 1 on (round 0 is the idle start, before
  // caches and JIT filled). Readings are not after a forced GC, so single rounds swing by tens of MiB.
  const fit = rows.slice(1);
  const slope = (y: (r: Round) => number): number => {
    const xs = fit.map((r) => r.requests + r.sessions);
    const mx = xs.reduce((a, b) => a + b, 0) / xs.length;
    const my = fit.reduce((a, r) => a + y(r), 0) / fit.length;
    const sxx = xs.reduce((a, x) => a + (x - mx) ** 2, 0);
    return sxx === 0 ? NaN : (fit.reduce((a, r, i) => a + (xs[i]! - mx) * (y(r) - my), 0) / sxx) * 2 ** 20;
  };
  const bytes = (n: number): string => (Number.isFinite(n) ? n.toFixed(0) : '–');
  const md = `## Soak

Generated by \`bench/soak.ts\`${short ? ' (SOAK_SHORT=1)' : ''} on ${new Date().toISOString()}.

${machineFacts()}

Setup: the compiled gateway over a simulated Nomad (bench data), watching it with its service
token. Each round sends ${requests} HTTP requests (16 at a time; in turn a volume read, a missing
volume (null), a document refused by validation) and opens ${sessions} graphql-ws sessions (50 at a time:
\`connection_init\`, a \`volumeChanged\` subscription, \`SUBSCRIBED\`, then \`complete\` and close, or
every fourth an abrupt hang-up), then idles ${IDLE_MS / 1000} s before the gateway's heap in use
(\`nodejs_heap_size_used_bytes\`) and RSS are read. Every request and session answered as
expected, or the run would have failed.

| round | requests so far | sessions so far | heap used MiB | RSS MiB |
|---|---|---|---|---|
${rows.map((x) => `| ${x.round} | ${x.requests} | ${x.sessions} | ${mib(x.heapMiB)} | ${mib(x.rssMiB)} |`).join('\n')}

Trend from round 1 on (least squares over requests and sessions): heap ${bytes(slope((r) => r.heapMiB))} bytes and RSS ${bytes(slope((r) => r.rssMiB))} bytes per request or session. Heap readings are not after a forced GC, so single rounds swing by tens of MiB and a trend within a few hundred bytes of zero is noise; the leak fixed on 2026-11-24 (docs/reliability.md) showed as ~4,000.
`;
  writeSection(out, 'soak', md);
  console.log(`wrote ${out}`);
  await pool.close();
  gw.child.kill('SIGTERM');
  sim.child.kill('SIGTERM');
  await Promise.all([once(gw.child, 'exit'), once(sim.child, 'exit')]);
}

main().catch((err: unknown) => {
  console.error(err);
  killStarted();
  process.exit(1);
});
