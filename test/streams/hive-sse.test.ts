/**
 * Hive Gateway, configured with header propagation alone (test/streams/hive-sse.config.ts),
 * routes a subscription to this gateway over GraphQL over SSE (its default HTTP executor) with the
 * caller's credential headers: a graphql-sse client at Hive Gateway receives a claim its own token
 * may see, and none it may not. No socket is opened to this gateway.
 */
import { join } from 'node:path';
import { createClient, type Client } from 'graphql-sse';
import type { NomadSimulator } from '../../simulators/nomad';
import {
  ANALYTICS_READ,
  MGMT,
  disposeAll,
  seedVolumes,
  startGatewayFor,
  startNomad,
  type GatewayUnderTest,
} from '../support/harness';
import { claimOverHttp } from '../support/nomad-control';
import { until } from '../support/until';
import { startComputeSubgraph, type ComputeSubgraph } from '../federation/compute-subgraph';
import { startHiveGateway, type HiveProcess } from '../federation/hive-process';

const CONFIG = join(__dirname, 'hive-sse.config.ts');

const SUBSCRIPTION = `subscription Claims {
  volumeChanged(filter: { backends: ["east"], types: [CLAIMED] }) {
    type cursor
    volume { id nativeId namespace status }
    omittedBackends { backend { id } reason }
  }
}`;

describe('@graphql-hive/gateway routes a volumes subscription over SSE with propagated headers', () => {
  let nomad: NomadSimulator;
  let gw: GatewayUnderTest;
  let compute: ComputeSubgraph;
  let hive: HiveProcess | undefined;
  let client: Client | undefined;

  /** Places an allocation claiming `volumeId` through the simulator's HTTP control API. */
  const claim = (namespace: string, volumeId: string, jobId: string): Promise<string> =>
    claimOverHttp(nomad.url, namespace, volumeId, jobId);

  beforeAll(async () => {
    nomad = await startNomad();
    seedVolumes(nomad, 1, 'default', 'db');
    seedVolumes(nomad, 1, 'analytics', 'lake');
    // The service token feeds the watcher; callers bring their own.
    gw = await startGatewayFor([{ id: 'east', url: nomad.url, token: MGMT }]);
    compute = await startComputeSubgraph([{ id: 'a0000000-0000-4000-8000-000000000001', name: 'app-1' }]);
    hive = await startHiveGateway(gw, compute, CONFIG, 'east');
  }, 90_000);

  afterAll(async () => {
    client?.dispose();
    await hive?.stop();
    await compute?.stop();
    await disposeAll();
  }, 30_000);

  it("delivers a Nomad claim to a graphql-sse client at Hive Gateway, authorized by the client's own token propagated as a header", async () => {
    const events: any[] = [];
    const errors: unknown[] = [];
    client = createClient({ url: hive!.url, retryAttempts: 0, headers: { 'X-Nomad-Token-east': ANALYTICS_READ } });
    const stop = client.subscribe<any>(
      { query: SUBSCRIPTION },
      {
        next: (r) => (r.errors ? errors.push(r.errors) : events.push(r.data!.volumeChanged)),
        error: (e) => errors.push(e),
        complete: () => undefined,
      },
    );
    try {
      await until(
        () => events.length > 0 || errors.length > 0,
        `SUBSCRIBED through Hive Gateway (log: ${hive!.log()})`,
        20_000,
      );
      expect(errors).toEqual([]);
      expect(events[0]).toMatchObject({ type: 'SUBSCRIBED', volume: null, omittedBackends: [] });
      // Over SSE: the gateway's hub has the subscription, and no socket is open.
      const metrics = await (await fetch(gw.gateway.url.replace('/graphql', '/metrics'))).text();
      expect(metrics).toMatch(/^gateway_ws_connections 0$/m);
      expect(metrics).toMatch(/^gateway_ws_subscriptions\{field="volumeChanged"\} 1$/m);

      // A claim in a namespace the caller cannot read, then one it can: only the second arrives.
      await claim('default', 'db-000', 'billing');
      await claim('analytics', 'lake-000', 'etl');
      await until(() => events.length > 1 || errors.length > 0, 'the CLAIMED event', 20_000);
      expect(errors).toEqual([]);
      expect(events[1]).toMatchObject({
        type: 'CLAIMED',
        volume: { nativeId: 'lake-000', namespace: 'analytics', status: 'IN_USE' },
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
