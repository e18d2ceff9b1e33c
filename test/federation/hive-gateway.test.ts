/**
 * `@graphql-hive/gateway` (issue 11 item 8; issue 19 item 4) routes a subscription of this
 * subgraph through a supergraph: the supergraph is composed with `@apollo/composition` from the
 * running gateway's own SDL (`_service { sdl }`) and the compute team's subgraph; the `hive-gateway`
 * CLI, unmodified, runs in a child process with test/federation/hive/gateway.config.ts (the
 * configuration docs/federation.md shows: header propagation only, no plugin). Hive Gateway talks
 * to this subgraph over graphql-ws with the caller's credential headers on the WebSocket upgrade
 * (its default HTTP transport uses GraphQL over SSE instead, with `propagateHeaders` alone:
 * test/streams/hive-sse.test.ts); a Nomad claim made through the simulator's control API arrives at
 * the client.
 *
 * The caller's Nomad token reads namespace `analytics` only; the gateway's watcher reads everything
 * with its service token. Only the `analytics` claim arrives, so the subscriber's own credential
 * (not the service one, not none) reached the subgraph. The OpenStack caller's `X-Auth-Token`
 * reaches the subgraph the same way: without it the region is omitted as NO_CREDENTIAL.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createClient, type Client } from 'graphql-ws';
import WebSocket from 'ws';
import type { NomadSimulator } from '../../simulators/nomad';
import {
  ANALYTICS_READ,
  MGMT,
  OS,
  disposeAll,
  seedVolumes,
  startGatewayFor,
  startNomad,
  startOpenStack,
  type GatewayUnderTest,
  type OpenStackUnderTest,
} from '../support/harness';
import { claimOverHttp } from '../support/nomad-control';
import { until } from '../support/until';
import { startComputeSubgraph, type ComputeSubgraph } from './compute-subgraph';
import { startHiveGateway, type HiveProcess } from './hive-process';

const ROOT = join(__dirname, '..', '..');
const CONFIG = join(__dirname, 'hive', 'gateway.config.ts');

const SUBSCRIPTION = `subscription Claims {
  volumeChanged(filter: { backends: ["east"], types: [CLAIMED] }) {
    type cursor observedAt
    volume { id nativeId namespace status }
    attachment { id state consumer { ... on VolumeAllocationConsumer { allocationId jobId } } }
    omittedBackends { backend { id } reason }
  }
}`;

/** One Hive Gateway over the supergraph, for the enclosing describe. */
interface HiveUnderTest {
  readonly gw: GatewayUnderTest;
  /** The OpenStack simulator behind backend `os`. */
  readonly os: OpenStackUnderTest;
  readonly url: string;
  /** hive-gateway's output so far. */
  log(): string;
  /** Places an allocation claiming `volumeId` through the simulator's HTTP control API. */
  claim(namespace: string, volumeId: string, jobId: string): Promise<string>;
  /** Closed after the describe's tests. */
  clients: Client[];
}

/**
 * Registers the enclosing describe's beforeAll/afterAll: a Nomad simulator (`db-000`, `db-001`
 * in `default`, `lake-000`, `lake-001` in `analytics`) as backend `east` and an OpenStack one as
 * `os`, the gateway (its watchers on the service credentials), the compute subgraph, the
 * supergraph, and `hive-gateway` with `config`.
 */
function withHive(config: string): HiveUnderTest {
  let nomad: NomadSimulator;
  let compute: ComputeSubgraph;
  let hive: HiveProcess | undefined;
  const h = { log: () => hive?.log() ?? '', clients: [] as Client[] } as {
    -readonly [K in keyof HiveUnderTest]: HiveUnderTest[K];
  };
  h.claim = (namespace, volumeId, jobId) => claimOverHttp(nomad.url, namespace, volumeId, jobId);

  beforeAll(async () => {
    nomad = await startNomad();
    seedVolumes(nomad, 2, 'default', 'db');
    seedVolumes(nomad, 2, 'analytics', 'lake');
    // The service token feeds the watcher; callers bring their own.
    h.os = await startOpenStack();
    h.gw = await startGatewayFor([
      { id: 'east', url: nomad.url, token: MGMT },
      h.os.backend('os', {
        auth: { method: 'password', username: OS.adminUser, password: OS.adminPassword, projectName: 'demo' },
        watchFastMs: 50,
        watchSlowMs: 100,
      }),
    ]);
    compute = await startComputeSubgraph([{ id: 'a0000000-0000-4000-8000-000000000001', name: 'app-1' }]);
    hive = await startHiveGateway(h.gw, compute, config, 'east,os');
    h.url = hive.url;
  }, 90_000);

  afterAll(async () => {
    await Promise.all(h.clients.map(async (c) => c.dispose()));
    await hive?.stop();
    await compute?.stop();
    await disposeAll();
  }, 30_000);
  return h;
}

/**
 * Waits for SUBSCRIBED in `events`, claims `db-00<n>` (in `default`: the caller cannot read it)
 * then `lake-00<n>` (in `analytics`), and expects the second alone to arrive.
 */
async function expectOwnClaim(h: HiveUnderTest, events: any[], errors: unknown[], n: number): Promise<void> {
  await until(
    () => events.length > 0 || errors.length > 0,
    `SUBSCRIBED through Hive Gateway (log: ${h.log()})`,
    20_000,
  );
  expect(errors).toEqual([]);
  expect(events[0]).toMatchObject({ type: 'SUBSCRIBED', volume: null, omittedBackends: [] });
  await h.claim('default', `db-00${n}`, 'billing');
  const alloc = await h.claim('analytics', `lake-00${n}`, 'etl');
  await until(() => events.length > 1 || errors.length > 0, 'the CLAIMED event', 20_000);
  expect(errors).toEqual([]);
  expect(events[1]).toMatchObject({
    type: 'CLAIMED',
    volume: { nativeId: `lake-00${n}`, namespace: 'analytics', status: 'IN_USE' },
    attachment: { state: 'ATTACHED', consumer: { allocationId: alloc, jobId: 'etl' } },
  });
  expect(events[1].cursor).not.toBe(events[0].cursor);
  // Nothing from `default` came before or after it.
  await new Promise((r) => setTimeout(r, 300));
  expect(events.map((e) => e.volume?.nativeId ?? e.type)).toEqual(['SUBSCRIBED', `lake-00${n}`]);
}

/** A subscription at Hive Gateway over GraphQL over SSE: its results as they come. */
interface SseSubscription {
  /** Each result's `data[field]`. */
  events: any[];
  errors: unknown[];
  /** Ends the stream and waits for the reader. */
  close(): Promise<void>;
}

/** Subscribes at Hive Gateway over GraphQL over SSE with `headers` (the caller's credentials as HTTP headers). */
async function sseSubscribe(
  h: HiveUnderTest,
  query: string,
  headers: Record<string, string>,
  field = 'volumeChanged',
): Promise<SseSubscription> {
  const events: any[] = [];
  const errors: unknown[] = [];
  const abort = new AbortController();
  const res = await fetch(h.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'text/event-stream', ...headers },
    body: JSON.stringify({ query }),
    signal: abort.signal,
  });
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toContain('text/event-stream');
  // GraphQL over SSE: `event: next` / `data: <result>` blocks.
  const read = (async () => {
    let buf = '';
    const decoder = new TextDecoder();
    for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
      buf += decoder.decode(chunk, { stream: true });
      let end: number;
      while ((end = buf.indexOf('\n\n')) >= 0) {
        const block = buf.slice(0, end);
        buf = buf.slice(end + 2);
        const data = block
          .split('\n')
          .filter((l) => l.startsWith('data:'))
          .map((l) => l.slice(5).trim())
          .join('\n');
        if (!/^event: next$/m.test(block) || !data) continue;
        const r = JSON.parse(data);
        if (r.errors) errors.push(r.errors);
        else events.push(r.data[field]);
      }
    }
  })().catch((e: unknown) => (abort.signal.aborted ? undefined : errors.push(e)));
  return {
    events,
    errors,
    close: async () => {
      abort.abort();
      await read;
    },
  };
}

/** Subscribes at Hive Gateway over SSE with `X-Nomad-Token-east` as an HTTP header and expects the caller's own claim. */
async function sseClientReceivesOwnClaim(h: HiveUnderTest, n: number): Promise<void> {
  const sub = await sseSubscribe(h, SUBSCRIPTION, { 'X-Nomad-Token-east': ANALYTICS_READ });
  try {
    await expectOwnClaim(h, sub.events, sub.errors, n);
  } finally {
    await sub.close();
  }
}

const wsConnections = async (h: HiveUnderTest): Promise<number> =>
  Number(
    /^gateway_ws_connections (\d+)$/m.exec(
      await (await fetch(h.gw.gateway.url.replace('/graphql', '/metrics'))).text(),
    )?.[1],
  );

describe('@graphql-hive/gateway routes a credentialed volumes subscription to the subgraph over graphql-ws, credentials on the upgrade', () => {
  const h = withHive(CONFIG);

  it('runs the configuration docs/federation.md shows: every code line of its Hive Gateway block is in the file run here', () => {
    const docs = readFileSync(join(ROOT, 'docs', 'federation.md'), 'utf8');
    const block = /### Hive Gateway[\s\S]*?```ts\n([\s\S]*?)```/.exec(docs)?.[1];
    const code = (text: string): string[] =>
      text
        .split('\n')
        .map((l) => l.trim())
        .filter((l) => l && !l.startsWith('//') && !l.startsWith('/**') && !l.startsWith('*'));
    const file = new Set(code(readFileSync(CONFIG, 'utf8')));
    expect(block).toBeDefined();
    expect(code(block!).filter((l) => !file.has(l))).toEqual([]);
  });

  it('forwards the credential headers of a query over HTTP', async () => {
    const res = await fetch(h.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'X-Nomad-Token-east': ANALYTICS_READ },
      body: JSON.stringify({ query: '{ volumes(first: 10) { nodes { id nativeId namespace } } }' }),
    });
    const body = await res.json();
    expect({ status: res.status, errors: body.errors }).toEqual({ status: 200, errors: undefined });
    // The caller's token lists one namespace: the analytics volumes only.
    expect(body.data.volumes.nodes.map((v: any) => `${v.namespace}/${v.nativeId}`)).toEqual([
      'analytics/lake-000',
      'analytics/lake-001',
    ]);
  });

  it("delivers a Nomad claim to a client subscribing at Hive Gateway with its credential as an HTTP header (SSE at Hive, the header on the subgraph socket's upgrade)", async () => {
    await sseClientReceivesOwnClaim(h, 0);
    // It reached the subgraph over graphql-ws (Hive closes an idle socket after 3 s).
    expect(await wsConnections(h)).toBeGreaterThanOrEqual(1);
  }, 60_000);

  it('delivers an OpenStack volume of its own project to a client subscribing at Hive Gateway with X-Auth-Token as an HTTP header', async () => {
    const sub = await sseSubscribe(
      h,
      'subscription { volumeChanged(filter: { backends: ["os"], types: [CREATED] }) { type volume { name } omittedBackends { backend { id } reason code } } }',
      { 'X-Auth-Token': h.os.demoToken },
    );
    try {
      await until(
        () => sub.events.length > 0 || sub.errors.length > 0,
        `SUBSCRIBED through Hive Gateway (log: ${h.log()})`,
        20_000,
      );
      expect(sub.errors).toEqual([]);
      // Without the token the region would be omitted as NO_CREDENTIAL.
      expect(sub.events[0]).toEqual({ type: 'SUBSCRIBED', volume: null, omittedBackends: [] });
      // Another project's volume (the demo token cannot read it), then one of the demo project.
      h.os.sim.seedVolume({ project: h.os.other, name: 'not-yours', size: 1 });
      h.os.sim.seedVolume({ project: h.os.demo, name: 'yours', size: 1 });
      await until(() => sub.events.length > 1 || sub.errors.length > 0, 'the CREATED event', 20_000);
      await new Promise((r) => setTimeout(r, 500));
      expect(sub.errors).toEqual([]);
      expect(sub.events.slice(1).map((e) => e.volume.name)).toEqual(['yours']);
    } finally {
      await sub.close();
    }
  }, 60_000);

  it('delivers a Nomad claim to a graphql-ws client at Hive Gateway that sends its credential in connection_init under the lower-case name', async () => {
    const events: any[] = [];
    const errors: unknown[] = [];
    const client = createClient({
      url: h.url.replace(/^http/, 'ws'),
      webSocketImpl: WebSocket,
      retryAttempts: 0,
      connectionParams: { 'x-nomad-token-east': ANALYTICS_READ },
    });
    h.clients.push(client);
    const stop = client.subscribe<any>(
      { query: SUBSCRIPTION },
      {
        next: (r) => (r.errors ? errors.push(r.errors) : events.push(r.data!.volumeChanged)),
        error: (e) => errors.push(e),
        complete: () => undefined,
      },
    );
    try {
      await expectOwnClaim(h, events, errors, 1);
    } finally {
      stop();
    }
  }, 60_000);
});
