/**
 * Abandoned queries: what a client hanging up mid-query costs the backend, for both choices of
 * `inFlightOnAbort` (adapters/transport.ts). A simulated Nomad with per-request latency and a
 * gateway run in this process; each query lists volumes with their attachments (one list call,
 * then one read per volume, 16 at a time) and the client hangs up part-way through the reads.
 * Counted from the simulator: TCP connections it accepted, requests it received, and how many of
 * those it answered (a request whose connection the gateway cut is never answered).
 *
 *   node --import tsx bench/abandon.ts      writes bench/ABANDON.md (ABANDON_OUT=path elsewhere)
 *   ABANDON_QUERIES=5 …                     fewer abandoned queries per mode (default 30)
 */
import { execSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { cpus, platform, release, totalmem } from 'node:os';
import { join } from 'node:path';
import { NomadBackend } from '../adapters/nomad/backend';
import type { TransportOptions } from '../adapters/http/transport';
import type { CallRecord } from '../adapters/contract/module';
import { startGateway } from '../server/app';
import { createLogger } from '../server/logger';
import { BackendRegistry } from '../domain/registry';
import { NomadSimulator } from '../simulators/nomad';

const QUERIES = Number(process.env.ABANDON_QUERIES ?? 30);
const VOLUMES = 100;
const LATENCY_MS = 20;
const CONNECTIONS = 16;
const out = process.env.ABANDON_OUT ?? join(__dirname, 'ABANDON.md');
const QUERY = `{ volumes(first: ${VOLUMES}) { nodes { id attachments { id } } } }`;
const TOKEN = 'abandon-bench-token';

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

interface Figures {
  mode: string;
  connections: number;
  /** Fewest–most new connections of one abandoned query. */
  perQuery: string;
  requests: number;
  /** Calls the gateway recorded with an answer. */
  answered: number;
  /** Calls the gateway recorded without one (cut when the client left). */
  unanswered: number;
  completedQuery: { ms: number; connections: number };
}

async function startSimulator(): Promise<NomadSimulator> {
  const sim = new NomadSimulator({ acl: { enabled: true } });
  sim.addToken({ secret: TOKEN, management: true });
  sim.addNode({ id: 'node-1', name: 'client-1' });
  sim.addPlugin({
    id: 'aws-ebs0',
    provider: 'ebs.csi.aws.com',
    version: 'v1.38.1',
    controllerRequired: true,
    controllersHealthy: 1,
    controllersExpected: 1,
    nodesHealthy: 1,
    nodesExpected: 1,
  });
  for (let i = 0; i < VOLUMES; i++) {
    const id = `vol-${String(i).padStart(3, '0')}`;
    sim.seedVolume({ ID: id, Name: id, PluginID: 'aws-ebs0', ExternalID: `ext-${id}`, Capacity: 10737418240 });
  }
  await sim.listen(0, '127.0.0.1');
  sim.setLatency(LATENCY_MS);
  return sim;
}

async function measure(sim: NomadSimulator, mode: NonNullable<TransportOptions['inFlightOnAbort']>): Promise<Figures> {
  const records: CallRecord[] = [];
  const backend = new NomadBackend({
    backend: 'nomad',
    baseUrl: sim.url,
    timeoutMs: 10_000,
    maxConnections: CONNECTIONS,
    inFlightOnAbort: mode,
    onCall: (r) => records.push(r),
  });
  const gateway = await startGateway({
    config: { port: 0, host: '127.0.0.1', maxConcurrentReads: CONNECTIONS, maxBodyBytes: 1_048_576 },
    registry: new BackendRegistry([backend]),
    logger: createLogger('silent'),
  });
  const post = (signal?: AbortSignal): Promise<Response> =>
    fetch(gateway.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-nomad-token': TOKEN },
      body: JSON.stringify({ query: QUERY }),
      signal,
    });
  // Warm the pool: one complete query opens its connections.
  await (await post()).json();
  const c0 = sim.connectionsAccepted();
  sim.clearRequests();
  records.length = 0;
  // Hang up once the simulator has received the list call and `reads` reads: spread over the
  // query, and the same points for both modes whatever the machine's speed.
  const perQuery: number[] = [];
  for (let i = 0; i < QUERIES; i++) {
    const before = sim.connectionsAccepted();
    const base = sim.requests().length;
    const reads = 1 + Math.floor(((VOLUMES - CONNECTIONS) * i) / QUERIES);
    const client = new AbortController();
    const done = post(client.signal)
      .then((r) => r.text())
      .catch(() => undefined);
    while (sim.requests().length < base + 1 + reads) await sleep(1);
    client.abort();
    await done;
    // Let the backend side go quiet before the next one, so each query is counted alone.
    await quiet(sim);
    perQuery.push(sim.connectionsAccepted() - before);
  }
  const log = sim.requests();
  await sleep(100);
  const figures: Figures = {
    mode,
    connections: sim.connectionsAccepted() - c0,
    perQuery: `${Math.min(...perQuery)}–${Math.max(...perQuery)}`,
    requests: log.length,
    answered: records.filter((r) => r.status !== 0).length,
    unanswered: records.filter((r) => r.status === 0).length,
    completedQuery: { ms: 0, connections: 0 },
  };
  // A complete query afterwards: does it find warm connections?
  const c1 = sim.connectionsAccepted();
  const t0 = performance.now();
  await (await post()).json();
  figures.completedQuery = { ms: performance.now() - t0, connections: sim.connectionsAccepted() - c1 };
  await gateway.stop();
  return figures;
}

/**
 * Waits until the simulator has received no new request for a few latencies (a request whose
 * connection was cut is never answered, so answers cannot tell).
 */
async function quiet(sim: NomadSimulator): Promise<void> {
  let seen = -1;
  for (;;) {
    await sleep(LATENCY_MS * 4);
    const n = sim.requests().length;
    if (n === seen) return;
    seen = n;
  }
}

async function main(): Promise<void> {
  const rows: Figures[] = [];
  for (const mode of ['finish', 'abort'] as const) {
    const sim = await startSimulator();
    rows.push(await measure(sim, mode));
    await sim.close();
  }
  const cpu = cpus();
  const commit = (() => {
    try {
      return execSync('git rev-parse --short HEAD', { cwd: join(__dirname, '..') })
        .toString()
        .trim();
    } catch {
      return 'unknown';
    }
  })();
  const md = `# Abandoned queries

Generated by \`node --import tsx bench/abandon.ts\` on ${new Date().toISOString()} (linked from RESULTS.md;
\`npm run bench\` does not touch this file).

| machine | |
|---|---|
| CPU | ${cpu[0]?.model ?? 'unknown'} × ${cpu.length} (nproc ${cpu.length}) |
| memory | ${(totalmem() / 2 ** 30).toFixed(1)} GiB |
| OS | ${platform()} ${release()} |
| Node.js | ${process.version} |
| commit | ${commit} |

Setup: simulated Nomad in this process with ${VOLUMES} volumes and ${LATENCY_MS} ms latency per request; the gateway
in this process with a pool of ${CONNECTIONS} connections, warmed by one complete query. Each of ${QUERIES} queries
\`volumes(first: ${VOLUMES}) { nodes { id attachments { id } } }\` (1 list call, then ${VOLUMES} reads, ${CONNECTIONS} at a time)
is abandoned by the client part-way through the reads (once the simulator has received the list call
and k reads, k spread from 1 to ${VOLUMES - CONNECTIONS}), and the backend is left to go quiet before the next. Counted at the simulator over all ${QUERIES} queries.
"Answered" and "cut" are the gateway's own call records (\`onCall\`): a call cut when the client left
got no answer. Calls never sent are not recorded.
A complete query afterwards shows whether the pool is still warm.

| in-flight calls on abandon | TCP connections accepted | per query (range) | requests received | answered | cut | complete query after: new connections | its time (ms) |
|---|---|---|---|---|---|---|---|
${rows
  .map(
    (r) =>
      `| \`${r.mode}\` | ${r.connections} | ${(r.connections / QUERIES).toFixed(1)} (${r.perQuery}) | ${r.requests} | ${r.answered} | ${r.unanswered} | ${r.completedQuery.connections} | ${r.completedQuery.ms.toFixed(0)} |`,
  )
  .join('\n')}

In \`abort\` mode undici reopens the cut connections at once, within the abandoned query, so their
cost shows in the per-query column rather than in the complete query after.

Before issue 9: the issue measured 12–72 new connections per abandoned query against a Nomad-shaped
stub, only 0–16 of them carrying a request. This script run once (2026-11-24, same machine) against
the transport before the change (commit aa8468f: every call passed the request's signal to undici,
and nothing checked it before sending) gave 1999 connections for the 30 queries, 66.6 per query
(28–100), for 1502 requests received: undici opens a connection even for a request whose signal
has already aborted, and cancelled queued requests did exactly that. Now calls not yet sent are
dropped before undici sees them, in both modes.

Chosen: \`finish\` (the default). A request already on the wire costs the backend the same
whether or not its answer is awaited, and on HTTP/1.1 cancelling it means destroying its
connection, which the next query pays for with new TCP connections (and TLS handshakes against
a real backend). Letting it finish within its own deadline keeps the pool warm; the caller is
answered at once either way. Writes are never cut half-sent either.
`;
  writeFileSync(out, md);
  console.log(md);
  console.log(`wrote ${out}`);
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
