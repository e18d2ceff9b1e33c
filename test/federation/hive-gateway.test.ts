/**
 * `@graphql-hive/gateway` (issue 11 item 8) routes a subscription of this subgraph through a
 * supergraph: the supergraph is composed with `@apollo/composition` from the running gateway's own
 * SDL (`_service { sdl }`) and the compute team's subgraph; the `hive-gateway` CLI, unmodified, runs
 * in a child process with test/federation/hive/gateway.config.ts (the configuration
 * docs/federation.md shows). A graphql-ws client subscribes at Hive Gateway; Hive Gateway talks to
 * this subgraph over graphql-ws with the caller's credentials in `connection_init`; a Nomad claim
 * made through the simulator's control API arrives at the client.
 *
 * The caller's token reads namespace `analytics` only; the gateway's watcher reads everything with
 * its service token. Only the `analytics` claim arrives, so the subscriber's own credential (not
 * the service one, not none) reached the subgraph.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createClient, type Client } from 'graphql-ws';
import WebSocket from 'ws';
import type { NomadSimulator } from '../../simulators/nomad';
import { ANALYTICS_READ, MGMT, closedPortUrl, disposeAll, seedVolumes, startGatewayFor, startNomad, type GatewayUnderTest } from '../support/harness';
import { until } from '../support/until';
import { startComputeSubgraph, type ComputeSubgraph } from './compute-subgraph';
import { composeSupergraph } from './supergraph';

const ROOT = join(__dirname, '..', '..');
const HIVE_BIN = join(ROOT, 'node_modules', '@graphql-hive', 'gateway', 'dist', 'bin.js');
const CONFIG = join(__dirname, 'hive', 'gateway.config.ts');

const SUBSCRIPTION = `subscription Claims {
  volumeChanged(filter: { backends: ["east"], types: [CLAIMED] }) {
    type cursor observedAt
    volume { id nativeId namespace status }
    attachment { id state consumer { ... on VolumeAllocationConsumer { allocationId jobId } } }
    omittedBackends { backend { id } reason }
  }
}`;

describe('@graphql-hive/gateway routes a volumes subscription over graphql-ws', () => {
  let nomad: NomadSimulator;
  let gw: GatewayUnderTest;
  let compute: ComputeSubgraph;
  let work: string;
  let hive: ChildProcess;
  let hiveUrl: string;
  let hiveLog = '';
  let client: Client | undefined;

  /** Places an allocation claiming `volumeId` through the simulator's HTTP control API. */
  const claim = async (namespace: string, volumeId: string, jobId: string): Promise<string> => {
    const res = await fetch(`${nomad.url}/_sim/allocations`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ namespace, jobId, nodeId: 'node-1111', volumes: [{ volumeId, mode: 'write', accessMode: 'single-node-writer', attachmentMode: 'file-system' }] }),
    });
    expect(res.status).toBe(200);
    return ((await res.json()) as { id: string }).id;
  };

  beforeAll(async () => {
    nomad = await startNomad();
    seedVolumes(nomad, 1, 'default', 'db');
    seedVolumes(nomad, 1, 'analytics', 'lake');
    // The service token feeds the watcher; callers bring their own.
    gw = await startGatewayFor([{ id: 'east', url: nomad.url, token: MGMT }]);
    compute = await startComputeSubgraph([{ id: 'a0000000-0000-4000-8000-000000000001', name: 'app-1' }]);
    const sdl = (await gw.gql('{ _service { sdl } }')).body.data._service.sdl as string;
    const composed = composeSupergraph([
      { name: 'volumes', url: gw.gateway.url, typeDefs: sdl },
      { name: 'compute', url: compute.url, typeDefs: compute.typeDefs },
    ]);
    expect(composed.errors).toEqual([]);
    work = mkdtempSync(join(tmpdir(), 'hive-gateway-test-'));
    writeFileSync(join(work, 'supergraph.graphql'), composed.supergraphSdl!);

    const port = new URL(await closedPortUrl()).port;
    hiveUrl = `http://127.0.0.1:${port}/graphql`;
    hive = spawn(process.execPath, [HIVE_BIN, 'supergraph', join(work, 'supergraph.graphql'), '-c', CONFIG, '--host', '127.0.0.1', '--port', port], {
      cwd: ROOT,
      env: { ...process.env, VOLUME_BACKEND_IDS: 'east', NODE_ENV: 'production' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    hive.stdout!.on('data', (d: Buffer) => (hiveLog += d.toString()));
    hive.stderr!.on('data', (d: Buffer) => (hiveLog += d.toString()));
    await until(async () => {
      if (hive.exitCode !== null) throw new Error(`hive-gateway exited ${hive.exitCode}:\n${hiveLog}`);
      return fetch(`http://127.0.0.1:${port}/healthcheck`).then((r) => r.ok, () => false);
    }, 'hive-gateway to listen', 60_000);
  }, 90_000);

  afterAll(async () => {
    await client?.dispose();
    if (hive && hive.exitCode === null) {
      const exited = new Promise((r) => hive.once('exit', r));
      hive.kill('SIGTERM');
      let fuse: NodeJS.Timeout | undefined;
      await Promise.race([exited, new Promise((r) => (fuse = setTimeout(r, 10_000)))]);
      clearTimeout(fuse);
      if (hive.exitCode === null) hive.kill('SIGKILL');
    }
    await compute?.stop();
    await disposeAll();
    if (work) rmSync(work, { recursive: true, force: true });
  }, 30_000);

  it('runs the configuration docs/federation.md shows: every code line of its Hive Gateway block is in the file run here', () => {
    const docs = readFileSync(join(ROOT, 'docs', 'federation.md'), 'utf8');
    const block = /### Hive Gateway[\s\S]*?```ts\n([\s\S]*?)```/.exec(docs)?.[1];
    const code = (text: string): string[] => text.split('\n').map((l) => l.trim()).filter((l) => l && !l.startsWith('//') && !l.startsWith('/**') && !l.startsWith('*'));
    const file = new Set(code(readFileSync(CONFIG, 'utf8')));
    expect(block).toBeDefined();
    expect(code(block!).filter((l) => !file.has(l))).toEqual([]);
  });

  it('forwards the credential headers of a query over HTTP', async () => {
    const res = await fetch(hiveUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'X-Nomad-Token-east': ANALYTICS_READ },
      body: JSON.stringify({ query: '{ volumes(first: 10) { nodes { id nativeId namespace } } }' }),
    });
    const body = (await res.json()) as any;
    expect({ status: res.status, errors: body.errors }).toEqual({ status: 200, errors: undefined });
    // The caller's token lists one namespace: the analytics volume only.
    expect(body.data.volumes.nodes.map((v: any) => `${v.namespace}/${v.nativeId}`)).toEqual(['analytics/lake-000']);
  });

  it("delivers a Nomad claim to a graphql-ws client at Hive Gateway, authorized by the client's own token", async () => {
    const events: any[] = [];
    const errors: unknown[] = [];
    client = createClient({ url: hiveUrl.replace(/^http/, 'ws'), webSocketImpl: WebSocket, retryAttempts: 0, connectionParams: { 'X-Nomad-Token-east': ANALYTICS_READ } });
    const stop = client.subscribe<any>({ query: SUBSCRIPTION }, { next: (r) => (r.errors ? errors.push(r.errors) : events.push(r.data!.volumeChanged)), error: (e) => errors.push(e), complete: () => undefined });
    try {
      await until(() => events.length > 0 || errors.length > 0, `SUBSCRIBED through Hive Gateway (log: ${hiveLog})`, 20_000);
      expect(errors).toEqual([]);
      expect(events[0]).toMatchObject({ type: 'SUBSCRIBED', volume: null, omittedBackends: [] });
      const connections = await (await fetch(gw.gateway.url.replace('/graphql', '/metrics'))).text();
      expect(connections).toMatch(/^gateway_ws_connections 1$/m);

      // A claim in a namespace the caller cannot read, then one it can: only the second arrives.
      await claim('default', 'db-000', 'billing');
      const alloc = await claim('analytics', 'lake-000', 'etl');
      await until(() => events.length > 1 || errors.length > 0, 'the CLAIMED event', 20_000);
      expect(errors).toEqual([]);
      expect(events[1]).toMatchObject({
        type: 'CLAIMED',
        volume: { nativeId: 'lake-000', namespace: 'analytics', status: 'IN_USE' },
        attachment: { state: 'ATTACHED', consumer: { allocationId: alloc, jobId: 'etl' } },
      });
      expect(events[1].cursor).not.toBe(events[0].cursor);
      // Nothing from `default` came before or after it.
      await new Promise((r) => setTimeout(r, 300));
      expect(events.map((e) => e.volume?.nativeId ?? e.type)).toEqual(['SUBSCRIBED', 'lake-000']);
    } finally {
      stop();
    }
  }, 60_000);
});
