/**
 * Hive Gateway (`@graphql-hive/gateway`, the `hive-gateway` CLI unmodified, in a child process)
 * in front of the volume gateway, configured with the file the repo ships,
 * deploy/hive-gateway/gateway.config.ts (docs/federation.md shows it whole). The supergraph is
 * composed with `@apollo/composition` from the running gateway's own SDL (`_service { sdl }`) and
 * the compute team's subgraph.
 *
 * A caller reaches the gateway with its own credentials over every transport Hive offers its
 * clients (graphql-ws, GraphQL over SSE, multipart), with credential names in any case, for
 * queries, mutations and subscriptions. The caller's Nomad token reads namespace `analytics`
 * only and its Keystone token project `demo` only; the gateway's watchers read everything with
 * service credentials. So an event that arrives (and one that does not) shows which credential
 * reached the gateway, and `omittedBackends` without `NO_CREDENTIAL` shows that one did.
 */
import { ApolloClient, HttpLink, InMemoryCache, gql } from '@apollo/client';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
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
import {
  README_HTTP_CLIENT,
  README_WS_CLIENT,
  runReadmeHttpClient,
  runReadmeWsClient,
} from '../support/readme-clients';
import { until } from '../support/until';
import { startComputeSubgraph, type ComputeSubgraph } from './compute-subgraph';
import { startHiveGateway, type HiveProcess } from './hive-process';
import { openClientStream, type ClientStream, type Transport } from './hive-transports';

const ROOT = join(__dirname, '..', '..');
const CONFIG = join(ROOT, 'deploy', 'hive-gateway', 'gateway.config.ts');

const CHANGES = `subscription Changes {
  volumeChanged(filter: { types: [CLAIMED, CREATED] }) {
    type
    volume { id name }
    omittedBackends { backend { id } reason }
  }
}`;
const LIST = '{ volumes(first: 100) { nodes { name backend { id } } omittedBackends { backend { id } reason } } }';

let nomad: NomadSimulator;
let os: OpenStackUnderTest;
let gw: GatewayUnderTest;
let compute: ComputeSubgraph;
let hive: HiveProcess | undefined;
let url: string;
const streams: ClientStream[] = [];
/** The caller's tokens: Nomad namespace `analytics`, Keystone project `demo`. */
let token: { nomad: string; keystone: string };

beforeAll(async () => {
  nomad = await startNomad();
  seedVolumes(nomad, 6, 'default', 'db');
  seedVolumes(nomad, 6, 'analytics', 'lake');
  os = await startOpenStack();
  token = { nomad: ANALYTICS_READ, keystone: os.demoToken };
  // The service credentials feed the watchers; callers bring their own.
  gw = await startGatewayFor([
    { id: 'east', url: nomad.url, token: MGMT },
    os.backend('os', {
      auth: { method: 'password', username: OS.adminUser, password: OS.adminPassword, projectName: 'demo' },
      watchFastMs: 50,
      watchSlowMs: 100,
    }),
  ]);
  compute = await startComputeSubgraph([{ id: 'a0000000-0000-4000-8000-000000000001', name: 'app-1' }]);
  hive = await startHiveGateway(gw, compute, CONFIG);
  url = hive.url;
}, 90_000);

afterAll(async () => {
  await Promise.all(streams.map((s) => s.close()));
  await hive?.stop();
  await compute?.stop();
  await disposeAll();
}, 30_000);

/** POSTs to Hive Gateway with `headers`. */
async function post(query: string, headers: Record<string, string>): Promise<any> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify({ query }),
  });
  expect(res.status).toBe(200);
  return res.json();
}

/** The Nomad volumes the caller's token lists: namespace `analytics` only. */
const LAKES = [0, 1, 2, 3, 4, 5].map((i) => `lake ${i}`);

/** A `LIST` answer: the Nomad volume names, and the omitted backends; the errors if any. */
function ownList(r: any): unknown {
  if (r?.errors || !r?.data) return r;
  const nodes = r.data.volumes.nodes as Array<{ name: string; backend: { id: string } }>;
  return {
    east: nodes.filter((v) => v.backend.id === 'east').map((v) => v.name),
    omitted: r.data.volumes.omittedBackends,
  };
}

/** The OpenStack volume names `keystoneToken` lists (its project's), through Hive Gateway. */
async function osNames(keystoneToken: string): Promise<string[]> {
  const r = await post('{ volumes(first: 100, filter: { backends: ["os"] }) { nodes { name } } }', {
    'X-Auth-Token': keystoneToken,
  });
  expect(r.errors).toBeUndefined();
  return r.data.volumes.nodes.map((v: { name: string }) => v.name);
}

/**
 * Claims `db-00<n>` (namespace `default`) and `lake-00<n>` (`analytics`), and creates `hidden-<n>`
 * (project `other`) and `yours-<n>` (`demo`); the caller's tokens may see the second of each pair.
 * Answers the OpenStack ids.
 */
async function changeBoth(n: number): Promise<{ yours: string; hidden: string }> {
  await claimOverHttp(nomad.url, 'default', `db-00${n}`, 'billing');
  await claimOverHttp(nomad.url, 'analytics', `lake-00${n}`, 'etl');
  const hidden = os.sim.seedVolume({ project: os.other, name: `hidden-${n}`, size: 1 });
  const yours = os.sim.seedVolume({ project: os.demo, name: `yours-${n}`, size: 1 });
  return { yours, hidden };
}

/** `CHANGES` results as `TYPE name` (SUBSCRIBED with its omissions), or the error. */
const shown = (s: ClientStream): string[] =>
  s.results.map((r) => {
    const e = 'data' in r && !('errors' in r && r.errors) ? r.data?.volumeChanged : undefined;
    if (!e) return JSON.stringify(r);
    return e.type === 'SUBSCRIBED' ? `SUBSCRIBED ${JSON.stringify(e.omittedBackends)}` : `${e.type} ${e.volume.name}`;
  });

describe('Hive Gateway with deploy/hive-gateway/gateway.config.ts in front of the volume gateway', () => {
  it('is the configuration docs/federation.md shows, whole and verbatim', () => {
    const docs = readFileSync(join(ROOT, 'docs', 'federation.md'), 'utf8');
    const block = /### Hive Gateway[\s\S]*?```ts\n([\s\S]*?)```/.exec(docs)?.[1];
    expect(block).toBe(readFileSync(CONFIG, 'utf8'));
  });

  // Before any test that creates a volume the caller may see: its event would come late.
  const subscribers: Array<[Transport, number, Record<string, 'nomad' | 'keystone'>]> = [
    ['graphql-ws', 0, { 'X-Nomad-Token-East': 'nomad', 'X-Auth-Token': 'keystone' }],
    ['sse', 1, { 'X-NOMAD-TOKEN-east': 'nomad', 'X-Auth-Token-OS': 'keystone' }],
  ];
  it.each(subscribers)(
    'delivers to a %s subscriber the changes its own credentials may see (volumes %i), names as %j',
    async (transport, n, names) => {
      const credentials = Object.fromEntries(Object.entries(names).map(([k, v]) => [k, token[v]]));
      const s = openClientStream(transport, url, CHANGES, credentials);
      streams.push(s);
      await until(
        () => s.results.length > 0,
        () => `SUBSCRIBED (log: ${hive!.log()})`,
        20_000,
      );
      // Both backends covered: neither is omitted as NO_CREDENTIAL.
      expect(shown(s)).toEqual(['SUBSCRIBED []']);
      // Hive reached the gateway over GraphQL over SSE, not a socket.
      const metrics = await (await fetch(gw.gateway.url.replace(/\/graphql$/, '/metrics'))).text();
      expect(Number(/^gateway_stream_subscriptions\{transport="sse"\} (\d+)$/m.exec(metrics)?.[1])).toBeGreaterThan(0);
      expect(metrics).toMatch(/^gateway_ws_connections 0$/m);
      await changeBoth(n);
      await until(
        () => s.results.length >= 3,
        () => `two changes, got ${JSON.stringify(shown(s))}`,
        20_000,
      );
      // Nothing the caller may not see came before, among or after them.
      await new Promise((r) => setTimeout(r, 500));
      expect(shown(s).sort()).toEqual([`CLAIMED lake ${n}`, `CREATED yours-${n}`, 'SUBSCRIBED []']);
      await s.close();
    },
    60_000,
  );

  it('answers a query sent over graphql-ws with the connection_init credentials, keys in any case', async () => {
    const s = openClientStream('graphql-ws', url, LIST, {
      'X-Nomad-Token-EAST': token.nomad,
      'X-Auth-Token': token.keystone,
    });
    streams.push(s);
    await until(() => s.results.length > 0, 'the answer');
    expect(ownList(s.results[0])).toEqual({ east: LAKES, omitted: [] });
    await s.close();
  });

  it('answers a query and a mutation over multipart with the credential headers, names in any case', async () => {
    const list = openClientStream('multipart', url, LIST, {
      'X-Nomad-Token-east': token.nomad,
      'X-Auth-Token': token.keystone,
    });
    const created = openClientStream(
      'multipart',
      url,
      'mutation { createVolume(input: { backend: "os", name: "over-multipart", sizeGiB: 1 }) { volume { id name } } }',
      { 'x-AUTH-token': token.keystone },
    );
    streams.push(list, created);
    await until(() => list.results.length > 0 && created.results.length > 0, 'two answers');
    expect([...list.responseTypes, ...created.responseTypes]).toEqual(Array(2).fill('multipart/mixed; boundary="-"'));
    expect(ownList(list.results[0])).toEqual({ east: LAKES, omitted: [] });
    expect(created.results[0]).toEqual({
      data: { createVolume: { volume: { id: expect.any(String), name: 'over-multipart' } } },
    });
    expect(await osNames(token.keystone)).toContain('over-multipart');
    expect(await osNames(os.otherToken)).not.toContain('over-multipart');
  });

  it("does not serve a subscription over multipart: Apollo Client's HttpLink gets 406 (docs/federation.md: use SSE or graphql-ws)", async () => {
    const client = new ApolloClient({
      link: new HttpLink({ uri: url, headers: { 'X-Auth-Token': token.keystone } }),
      cache: new InMemoryCache(),
    });
    // Apollo Client 4 hands an error as a result with `error`, then completes.
    const seen: any[] = [];
    const sub = client.subscribe({ query: gql(CHANGES) }).subscribe({ next: (r) => void seen.push(r) });
    try {
      await until(() => seen.length > 0, 'the refusal');
      expect(seen).toEqual([
        { data: undefined, error: expect.objectContaining({ name: 'ServerError', statusCode: 406 }) },
      ]);
    } finally {
      sub.unsubscribe();
      client.stop();
    }
  });

  it('forwards the credential headers of a query and a mutation over HTTP, names in any case', async () => {
    const list = await post(LIST, { 'X-Nomad-Token-East': token.nomad, 'X-AUTH-TOKEN': token.keystone });
    expect(ownList(list)).toEqual({ east: LAKES, omitted: [] });
    const created = await post(
      'mutation { createVolume(input: { backend: "os", name: "through-hive", sizeGiB: 1 }) { volume { id name } } }',
      { 'X-Auth-Token-os': token.keystone },
    );
    expect(created).toEqual({ data: { createVolume: { volume: { id: expect.any(String), name: 'through-hive' } } } });
    expect(await osNames(token.keystone)).toContain('through-hive');
    expect(await osNames(os.otherToken)).not.toContain('through-hive');
  });

  it("runs the README's JavaScript client through Hive Gateway as written: it attaches and waits for the end", async () => {
    expect(README_HTTP_CLIENT).toContain('attachVolume');
    const serverId = os.sim.seedServer({ project: os.demo, name: 'app-1' });
    const volume = os.sim.seedVolume({ project: os.demo, name: 'to-attach', size: 1 });
    const found = await post('{ volumes(filter: { backends: ["os"], name: "to-attach" }) { nodes { id } } }', {
      'X-Auth-Token': token.keystone,
    });
    const op = await runReadmeHttpClient(url, found.data.volumes.nodes[0].id, serverId, {
      OS_TOKEN: token.keystone,
      NOMAD_TOKEN: token.nomad,
    });
    expect(op).toEqual({ id: expect.any(String), state: 'SUCCEEDED', failureReason: null });
    expect(os.sim.volume(volume)?.status).toBe('in-use');
  }, 30_000);

  it("runs the README's graphql-ws client through Hive Gateway as written (X-Auth-Token, X-Nomad-Token in connection_init)", async () => {
    expect(README_WS_CLIENT).toContain("connectionParams: { 'X-Auth-Token'");
    const follower = await runReadmeWsClient(url.replace(/^http/, 'ws'), {
      OS_TOKEN: token.keystone,
      NOMAD_TOKEN: token.nomad,
    });
    const { logs } = follower;
    try {
      await until(
        () => logs.includes('SUBSCRIBED'),
        () => `SUBSCRIBED, got ${JSON.stringify(logs)}`,
        20_000,
      );
      const { yours, hidden } = await changeBoth(2);
      await until(
        () => logs.includes('CLAIMED lake-002') && logs.includes(`CREATED ${yours}`),
        () => `the two changes, got ${JSON.stringify(logs)}`,
        20_000,
      );
      await new Promise((r) => setTimeout(r, 500));
      // Only changes (`TYPE nativeId`), none the caller may not see, no error.
      expect(logs.filter((l) => l.includes('db-002') || l.includes(hidden) || !/^[A-Z_]+( \S+)?$/.test(l))).toEqual([]);
    } finally {
      await follower.stop();
    }
  }, 60_000);

  it('refuses a connection_init credential given twice with two values in two cases, or not a string: BAD_USER_INPUT naming it', async () => {
    const twice = openClientStream('graphql-ws', url, CHANGES, {
      'X-Auth-Token': os.demoToken,
      'x-auth-token': os.otherToken,
    });
    const notString = openClientStream('graphql-ws', url, CHANGES, { 'X-Nomad-Token': 42 as unknown as string });
    streams.push(twice, notString);
    await until(() => twice.results.length > 0 && notString.results.length > 0, 'the refusals');
    const refusal = (message: string): unknown => [
      { errors: [expect.objectContaining({ message, extensions: { code: 'BAD_USER_INPUT' } })] },
    ];
    expect(twice.results).toEqual(
      refusal('x-auth-token is given twice with different values (names are case-insensitive)'),
    );
    expect(notString.results).toEqual(refusal('x-nomad-token must be a string'));
    // Neither value is named.
    expect(JSON.stringify([twice.results, notString.results])).not.toMatch(
      new RegExp(`${os.demoToken}|${os.otherToken}`),
    );
    await Promise.all([twice.close(), notString.close()]);
  });
});
