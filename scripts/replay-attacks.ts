/**
 * Replays the hostile inputs of docs/reliability.md against a running gateway (by default the
 * demo that `npm start` serves) and prints what each one gets: HTTP status, error code, time,
 * and the backend calls it cost (read from the gateway's own /metrics before and after).
 *
 *   npm run attacks                     # against http://127.0.0.1:4000 (the demo)
 *   npm run attacks -- http://host:port # another gateway with the demo's backends
 *
 * Then the resilience rows (docs/reliability.md, R1–R4, R12, R14–R17 and R20): R1–R3 over
 * graphql-ws, R12, R14 (paused SSE, multipart and graphql-ws readers), R15 (unique documents) and
 * R17 (a tenant's volume left `reserved`: the watcher's list reads per minute) against the same
 * gateway; R4 and R20 (a stop of 60 s) against a Nomad simulator and a gateway of their own, both
 * child processes, because a hung backend needs a simulator that can be stopped (the demo's run
 * inside the gateway process); R16 starts a gateway child process per configuration mistake.
 *
 * It sends only to the given address (and, for R4, R16 and R20, to the processes it starts on loopback); every
 * loop is bounded. The demo's credentials are the ones `npm start` prints.
 */
import { Agent, request } from 'node:http';
import { connect } from 'node:net';
import { replayConfigTypos } from './attacks/config-typos';
import { replayHungBackend, replayLongStop } from './attacks/hung-backend';
import { replayMetricLabels } from './attacks/metric-labels';
import { replayPausedStreams } from './attacks/paused-streams';
import { replayReservePoll } from './attacks/reserve-poll';
import { replayUniqueDocuments } from './attacks/unique-documents';
import { replayWsAttacks } from './attacks/ws';

const base = (process.argv[2] ?? 'http://127.0.0.1:4000').replace(/\/+$/, '').replace(/\/graphql$/, '');
const OS_TOKEN = { 'x-auth-token': 'demo-openstack-token' };

interface Outcome {
  status: number;
  code: string;
  ms: number;
  calls: number;
  bytes: number;
}

async function backendCalls(): Promise<number> {
  const text = await (await fetch(`${base}/metrics`)).text();
  let n = 0;
  for (const line of text.split('\n'))
    if (line.startsWith('gateway_backend_calls_total{')) n += Number(line.slice(line.lastIndexOf(' ') + 1));
  return n;
}

async function post(body: string, headers: Record<string, string> = {}): Promise<{ status: number; text: string }> {
  const res = await fetch(`${base}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body,
    signal: AbortSignal.timeout(120_000),
  });
  return { status: res.status, text: await res.text() };
}

function codeOf(text: string): string {
  try {
    const body = JSON.parse(text) as { errors?: Array<{ extensions?: { code?: string } }> };
    const codes = [...new Set((body.errors ?? []).map((e) => e.extensions?.code ?? '?'))];
    return codes.length === 0 ? 'data' : codes.join(', ');
  } catch {
    return 'not JSON';
  }
}

async function measure(run: () => Promise<{ status: number; text: string }>): Promise<Outcome> {
  const before = await backendCalls();
  const started = performance.now();
  const r = await run().catch((err: Error) => ({ status: 0, text: `"${err.message}"` }));
  const ms = performance.now() - started;
  return {
    status: r.status,
    code: r.status === 0 ? `failed: ${r.text}` : codeOf(r.text),
    ms,
    calls: (await backendCalls()) - before,
    bytes: r.text.length,
  };
}

const q = (query: string, variables?: unknown): string => JSON.stringify({ query, variables });
const nest = (depth: number, open: string, leaf: string): string =>
  `${open.repeat(depth)}${leaf}${'}'.repeat(depth * (open.split('{').length - 1))}`;
const gid = (parts: string[]): string => Buffer.from(JSON.stringify(parts)).toString('base64url');

/** Sends raw bytes and returns the status line's code (0 when the connection was reset). */
function raw(bytes: string): Promise<{ status: number; text: string }> {
  const u = new URL(base);
  return new Promise((resolve) => {
    const s = connect(Number(u.port || 80), u.hostname);
    let got = '';
    s.on('data', (d) => (got += d.toString('latin1')));
    s.on('error', () => resolve({ status: 0, text: '"reset"' }));
    s.on('close', () =>
      resolve({
        status: Number(/^HTTP\/1\.1 (\d{3})/.exec(got)?.[1] ?? 0),
        text: got.slice(got.indexOf('\r\n\r\n') + 4),
      }),
    );
    s.setTimeout(10_000, () => s.destroy());
    s.end(bytes);
  });
}

/**
 * A demo server that has volume attachments (the nesting attack starts from its attachments);
 * a well-formed UUID that names no server when the demo has none (the depth limit refuses the
 * document before anything is read either way).
 */
async function demoServerId(): Promise<string> {
  const r = await post(
    q(
      '{ volumes(first: 50, filter: { backends: ["openstack"] }) { nodes { attachments { consumer { ... on VolumeServerConsumer { serverId } } } } } }',
    ),
    OS_TOKEN,
  ).catch(() => undefined);
  const body = r
    ? (JSON.parse(r.text) as {
        data?: {
          volumes?: { nodes?: Array<{ attachments?: Array<{ consumer?: { serverId?: string } }> | null } | null> };
        };
      })
    : undefined;
  const found = body?.data?.volumes?.nodes?.flatMap((v) => v?.attachments ?? []).find((a) => a.consumer?.serverId)
    ?.consumer?.serverId;
  return found ?? '00000000-0000-4000-8000-000000000000';
}

const attacks = (serverId: string): Array<[string, () => Promise<{ status: number; text: string }>]> => [
  [
    '1. volumes → attachments → volume nesting, 20 levels',
    () =>
      post(
        q(
          `{ volumes(first: 50, filter: { backends: ["nomad-east"] }) { nodes { ${nest(20, 'id attachments { volume { ', 'id')} } } }`,
        ),
      ),
  ],
  [
    '1. server attachments → consumer server → volumeAttachments nesting, 20 levels',
    () =>
      post(
        q(
          `{ serverVolumeAttachments(serverId: "${serverId}") { ${nest(20, 'id consumer { ... on VolumeServerConsumer { server { volumeAttachments { ', 'id')} } }`,
        ),
        OS_TOKEN,
      ),
  ],
  ...[1, 2, 3, 4, 5, 6, 7].map((i): [string, () => Promise<{ status: number; text: string }>] => [
    `2. snapshots with secret value "💥" (try ${i} of 7)`,
    () =>
      post(
        q(
          '{ volumeSnapshots(backend: "nomad-east", filter: { plugin: "aws-ebs0" }, secrets: [{ key: "k", value: "💥" }]) { nodes { id } } }',
        ),
      ),
  ]),
  [
    '2. snapshots with a secret value holding a newline',
    () =>
      post(
        q(
          'query($s: [StorageKeyValueInput!]) { volumeSnapshots(backend: "nomad-east", filter: { plugin: "aws-ebs0" }, secrets: $s) { nodes { id } } }',
          { s: [{ key: 'k', value: 'a\nb' }] },
        ),
      ),
  ],
  [
    '2. nomad-east still answers afterwards',
    () => post(q('{ volumes(first: 1, filter: { backends: ["nomad-east"] }) { nodes { id } } }')),
  ],
  [
    '3. 1,000 aliases of volumes(first: 500) { nodes { id attachments { id } } }',
    () =>
      post(
        q(
          `{ ${Array.from({ length: 1000 }, (_, i) => `a${i}: volumes(first: 500) { nodes { id attachments { id } } }`).join(' ')} }`,
        ),
      ),
  ],
  [
    '3. 5,000 aliases of the same',
    () =>
      post(
        q(
          `{ ${Array.from({ length: 5000 }, (_, i) => `a${i}: volumes(first: 500) { nodes { id attachments { id } } }`).join(' ')} }`,
        ),
      ),
  ],
  [
    '3. 1,000 aliases of __schema',
    () => post(q(`{ ${Array.from({ length: 1000 }, (_, i) => `s${i}: __schema { types { name } }`).join(' ')} }`)),
  ],
  [
    '3. 15 aliases of volumes(first: 500) with attachments (under the alias limit)',
    () =>
      post(
        q(
          `{ ${Array.from({ length: 15 }, (_, i) => `a${i}: volumes(first: 500) { nodes { id attachments { id } } }`).join(' ')} }`,
        ),
      ),
  ],
  [
    '4. lone surrogate in nativeId',
    () =>
      post(q('query($n: String!) { volumeByNativeId(backend: "nomad-east", nativeId: $n) { id } }', { n: 'ab\ud800' })),
  ],
  [
    '4. lone surrogate inside a global id',
    () =>
      post(
        q('query($id: ID!) { volume(id: $id) { id } }', { id: gid(['Volume', 'nomad-east', 'default', 'x\ud800']) }),
      ),
  ],
  ['4. "." as a Nomad volume id', () => post(q('{ volumeByNativeId(backend: "nomad-east", nativeId: ".") { id } }'))],
  [
    '4. global id with scope "*"',
    () =>
      post(
        q('query($id: ID!) { volume(id: $id) { id } }', { id: gid(['Volume', 'nomad-east', '*', 'postgres-data']) }),
      ),
  ],
  [
    '6. body of 2 MiB',
    () =>
      raw(
        `POST /graphql HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${2 * 1048576}\r\nConnection: close\r\n\r\n${' '.repeat(2 * 1048576)}`,
      ),
  ],
  [
    '6. 64 KiB of headers',
    () => raw(`POST /graphql HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(65536)}\r\nConnection: close\r\n\r\n`),
  ],
  [
    '7. APQ hash that does not match the query',
    () =>
      post(
        JSON.stringify({
          query: '{ __typename }',
          extensions: { persistedQuery: { version: 1, sha256Hash: '0'.repeat(64) } },
        }),
      ),
  ],
  ['7. a subscription over HTTP', () => post(q('subscription { volumeChanged { id } }'))],
  [
    '7. Nomad token header holding a tab',
    () =>
      post(q('{ volumes(first: 1, filter: { backends: ["nomad-east"] }) { nodes { id } } }'), {
        'x-nomad-token': 'demo\tinjected',
      }),
  ],
  [
    '7. Nomad token header with a control byte',
    () =>
      raw(
        `POST /graphql HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nX-Nomad-Token: caf\u00e9\u0001\r\nContent-Length: 26\r\nConnection: close\r\n\r\n{"query":"{ __typename }"}`,
      ),
  ],
  [
    '8. _entities with 5,000 volume representations',
    () =>
      post(
        q('query($r: [_Any!]!) { _entities(representations: $r) { ... on Volume { id name } } }', {
          r: Array.from({ length: 5000 }, (_, i) => ({
            __typename: 'Volume',
            id: gid(['Volume', 'nomad-east', 'default', `vol-${i}`]),
          })),
        }),
      ),
  ],
  [
    '8. _entities with a representation that is not an object',
    () => post(q('{ _entities(representations: [""]) { __typename } }')),
  ],
];

async function main(): Promise<void> {
  console.log(`gateway: ${base}\n`);
  console.log('| attack | HTTP | code | ms | backend calls | response bytes |');
  console.log('|---|---|---|---|---|---|');
  for (const [name, run] of attacks(await demoServerId())) {
    const o = await measure(run);
    console.log(`| ${name} | ${o.status || 'none'} | ${o.code} | ${o.ms.toFixed(0)} | ${o.calls} | ${o.bytes} |`);
  }
  // One caller with more requests in flight than its cap: the rest are refused at once. Each on
  // its own connection (fetch's pool would queue them on the client side).
  const agent = new Agent({ keepAlive: false, maxSockets: Infinity });
  const listBody = q(
    '{ volumes(first: 50, filter: { backends: ["nomad-east"] }) { nodes { id attachments { id } } } }',
  );
  const one = (): Promise<number> =>
    new Promise((resolve) => {
      const u = new URL(`${base}/graphql`);
      const r = request(
        {
          host: u.hostname,
          port: u.port,
          path: u.pathname,
          method: 'POST',
          agent,
          headers: {
            'content-type': 'application/json',
            'content-length': Buffer.byteLength(listBody),
            'x-nomad-token-nomad-east': 'demo-east-management',
          },
        },
        (m) => {
          m.resume();
          m.on('end', () => resolve(m.statusCode ?? 0));
        },
      );
      r.on('error', () => resolve(0));
      r.end(listBody);
    });
  const burst = await Promise.all(Array.from({ length: 150 }, one));
  const statuses = burst.reduce<Record<number, number>>((acc, s) => ((acc[s] = (acc[s] ?? 0) + 1), acc), {});
  console.log(
    `\n150 concurrent list-with-attachments queries from one caller (the demo management token): statuses ${JSON.stringify(statuses)}`,
  );
  // A concurrent small read while an alias flood is refused: the flood must not stall it.
  const flood = Array.from({ length: 20 }, () =>
    post(q(`{ ${Array.from({ length: 1000 }, (_, i) => `s${i}: __schema { types { name } }`).join(' ')} }`)),
  );
  const t = performance.now();
  await post(q('{ __typename }'));
  const small = performance.now() - t;
  await Promise.all(flood);
  console.log(`\n{ __typename } during 20 concurrent floods of 1,000 __schema aliases: ${small.toFixed(0)} ms`);
  const health = await fetch(`${base}/healthz`).then(
    (r) => r.status,
    () => 0,
  );
  console.log(`/healthz afterwards: ${health}`);

  console.log('\n## Resilience (R1–R3 over graphql-ws)\n');
  console.log('| attack | what it got |');
  console.log('|---|---|');
  for (const r of await replayWsAttacks(base)) console.log(`| ${r.attack} | ${r.got} |`);
  console.log('\n## R12: metric labels\n');
  for (const line of await replayMetricLabels(base)) console.log(line);
  console.log('\n## R14: paused SSE, multipart and graphql-ws readers of one address\n');
  for (const line of await replayPausedStreams(base)) console.log(line);
  console.log('\n## R15: unique valid documents (compiled execution)\n');
  for (const line of await replayUniqueDocuments(base)) console.log(line);
  console.log("\n## R17: a tenant holds a volume reserved (the OpenStack watcher's fast polling)\n");
  for (const line of await replayReservePoll(base)) console.log(line);
  console.log('\n## R4: a hung backend (own Nomad simulator and gateway, SIGSTOP)\n');
  for (const line of await replayHungBackend()) console.log(line);
  console.log('\n## R20: a long stop (own Nomad simulator and gateway, SIGSTOP for 60 s)\n');
  for (const line of await replayLongStop()) console.log(line);
  console.log('\n## R16: configuration slips and conflicts (a gateway child process per start)\n');
  for (const line of await replayConfigTypos()) console.log(line);
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
