/**
 * Events resolve what queries resolve (docs/subscriptions.md, "Fields the view lacks"): a document
 * that selects a plugin or a backend's health is executed with its subscribers' own credentials,
 * once per event for each credential, the Nomad simulator's request log showing whose token each
 * read carried; past the read budget the field is NOT_SERVED_IN_EVENTS and /metrics counts it; and
 * Apollo Client 4, under its default error policy, gets data for a list-row fragment that selects
 * `details { plugin { … } }`.
 */
import { ApolloClient, ApolloLink, HttpLink, InMemoryCache, gql } from '@apollo/client';
import { GraphQLWsLink } from '@apollo/client/link/subscriptions';
import { getMainDefinition } from '@apollo/client/utilities';
import { Kind, OperationTypeNode } from 'graphql';
import { createClient } from 'graphql-ws';
import WebSocket from 'ws';
import type { NomadSimulator } from '../../simulators/nomad';
import {
  ackedClient,
  claim,
  MGMT,
  sample,
  startWsGateway,
  stopAll,
  subscribed,
  waitFor,
  type RawClient,
} from './helpers';

afterEach(stopAll);

/** A list row's fields, a plugin and the backend's health among them: reads the watcher's view lacks. */
const HEAVY = `fragment Row on Volume {
  id name status
  backend { id health { status } }
  details { ... on NomadVolumeDetails { pluginId plugin { id provider version } } }
  attachments { state consumer { ... on VolumeAllocationConsumer { name jobId } } }
}
subscription { volumeChanged(filter: { types: [CLAIMED] }) { type volume { ...Row } } }`;
const PLUGIN_ONLY =
  'subscription { volumeChanged(filter: { types: [CLAIMED] }) { type volume { name details { ... on NomadVolumeDetails { plugin { id } } } } } }';

/** Tokens of the Nomad plugin reads the simulator answered (in order). */
const pluginReads = (sim: NomadSimulator): Array<string | undefined> =>
  sim
    .requests()
    .filter((r) => r.path.startsWith('/v1/plugin/csi/'))
    .map((r) => r.token);

/** The next `next` payload of subscription `id` whose event is CLAIMED, as raw text and parsed. */
async function claimed(c: RawClient, id: string): Promise<{ raw: string; payload: any }> {
  const raw = await c.nextRaw(15_000, (f) => f.includes(`"id":${JSON.stringify(id)}`) && f.includes('"CLAIMED"'));
  return { raw: raw.slice(raw.indexOf('"payload":') + '"payload":'.length, -1), payload: JSON.parse(raw).payload };
}

describe('event fields that need backend reads', () => {
  it("should resolve a heavy fragment's fields on a change event with no errors, read once for subscribers of one credential", async () => {
    const gw = await startWsGateway();
    const a = await ackedClient(gw.wsUrl);
    const b = await ackedClient(gw.wsUrl);
    await subscribed(a, 'a', HEAVY);
    await subscribed(b, 'b', HEAVY);
    const executions = async (): Promise<number> =>
      sample(await gw.scrape(), 'gateway_live_executions_total{field="volumeChanged"}') ?? 0;
    expect(await executions()).toBe(2);
    gw.sim.clearRequests();

    claim(gw.sim, ['vol-001'], 'job-a');
    const [ea, eb] = await Promise.all([claimed(a, 'a'), claimed(b, 'b')]);
    expect(ea.payload.errors).toBeUndefined();
    expect(ea.payload.data.volumeChanged).toMatchObject({
      type: 'CLAIMED',
      volume: {
        name: 'vol 1',
        backend: { id: 'east', health: { status: expect.stringMatching(/^(UP|DEGRADED)$/) } },
        details: { pluginId: 'aws-ebs0', plugin: { id: expect.any(String), provider: expect.any(String) } },
        attachments: [{ state: expect.any(String), consumer: { jobId: 'job-a' } }],
      },
    });
    // One credential: one execution, the same bytes to both, and the plugin read once, with that token.
    expect(eb.raw).toBe(ea.raw);
    await waitFor(async () => (await executions()) >= 3, 'the event execution to be counted');
    expect(await executions()).toBe(3);
    expect(pluginReads(gw.sim)).toEqual([MGMT]);
    expect(sample(await gw.scrape(), 'gateway_live_event_reads_total')).toBeGreaterThanOrEqual(1);

    // The next change within the cache's TTL: the plugin comes from the credential's cache.
    claim(gw.sim, ['vol-002'], 'job-b');
    const next = await claimed(a, 'a');
    expect(next.payload.errors).toBeUndefined();
    expect(next.payload.data.volumeChanged.volume.details.plugin.id).toBe(
      ea.payload.data.volumeChanged.volume.details.plugin.id,
    );
    expect(pluginReads(gw.sim)).toEqual([MGMT]);
    expect(sample(await gw.scrape(), 'gateway_live_event_read_cache_hits_total')).toBeGreaterThanOrEqual(1);
  });

  it('should read with each subscriber its own credential, and show each only what its credential may see', async () => {
    const gw = await startWsGateway();
    gw.sim.addToken({ secret: 'reader-a', namespaces: { default: 'read' } });
    gw.sim.addToken({ secret: 'reader-b', namespaces: { default: 'read' }, pluginRead: false });
    const a = await ackedClient(gw.wsUrl, { 'X-Nomad-Token': 'reader-a' });
    const b = await ackedClient(gw.wsUrl, { 'X-Nomad-Token': 'reader-b' });
    await subscribed(a, 'a', PLUGIN_ONLY);
    await subscribed(b, 'b', PLUGIN_ONLY);
    gw.sim.clearRequests();

    claim(gw.sim, ['vol-003']);
    const [ea, eb] = await Promise.all([claimed(a, 'a'), claimed(b, 'b')]);
    expect(ea.payload.errors).toBeUndefined();
    expect(ea.payload.data.volumeChanged.volume.details.plugin).toEqual({ id: expect.any(String) });
    // Nomad refuses reader-b the plugin: its subscriber gets what a query with its token gets.
    expect(eb.payload.data.volumeChanged.volume).toEqual({ name: 'vol 3', details: { plugin: null } });
    expect(eb.payload.errors).toEqual([
      expect.objectContaining({
        path: ['volumeChanged', 'volume', 'details', 'plugin'],
        extensions: expect.objectContaining({ code: 'FORBIDDEN' }),
      }),
    ]);
    expect(pluginReads(gw.sim).sort()).toEqual(['reader-a', 'reader-b']);
  });

  it("should refuse reads past the event's budget with NOT_SERVED_IN_EVENTS, and count the refusals in /metrics", async () => {
    const gw = await startWsGateway({ live: { eventReadsPerEvent: 1, eventReadCacheTtlMs: 0 } });
    gw.sim.addToken({ secret: 'reader-a', namespaces: { default: 'read' } });
    const a = await ackedClient(gw.wsUrl, { 'X-Nomad-Token': 'reader-a' });
    const b = await ackedClient(gw.wsUrl);
    await subscribed(a, 'a', PLUGIN_ONLY);
    await subscribed(b, 'b', PLUGIN_ONLY);

    claim(gw.sim, ['vol-000']);
    const events = await Promise.all([claimed(a, 'a'), claimed(b, 'b')]);
    const served = events.filter((e) => e.payload.errors === undefined);
    const refused = events.filter((e) => e.payload.errors !== undefined);
    expect(served).toHaveLength(1);
    expect(served[0]!.payload.data.volumeChanged.volume.details.plugin).toEqual({ id: expect.any(String) });
    expect(refused).toHaveLength(1);
    expect(refused[0]!.payload.data.volumeChanged.volume.details.plugin).toBeNull();
    expect(refused[0]!.payload.errors).toEqual([
      expect.objectContaining({
        path: ['volumeChanged', 'volume', 'details', 'plugin'],
        extensions: expect.objectContaining({ code: 'NOT_SERVED_IN_EVENTS', limit: 'eventReadsPerEvent', max: 1 }),
      }),
    ]);
    const metrics = await gw.metrics();
    expect(sample(metrics, 'gateway_live_event_read_refusals_total{limit="eventReadsPerEvent"}')).toBe(1);
    expect(sample(metrics, 'gateway_live_event_reads_total')).toBe(1);
  });

  it("should give Apollo Client 4's default error policy data for a list-row fragment with details { plugin }", async () => {
    const gw = await startWsGateway();
    const ROW = gql`
      fragment VolumeRow on Volume {
        id
        name
        status
        details {
          ... on NomadVolumeDetails {
            pluginId
            plugin {
              id
              provider
            }
          }
        }
      }
    `;
    const LIST = gql`
      query Volumes {
        volumes(first: 10) {
          nodes {
            ...VolumeRow
          }
        }
      }
      ${ROW}
    `;
    const WATCH = gql`
      subscription Watch {
        volumeChanged(filter: { types: [CLAIMED] }) {
          type
          volume {
            ...VolumeRow
          }
        }
      }
      ${ROW}
    `;
    const headers = { 'X-Nomad-Token': MGMT };
    const wsClient = createClient({ url: gw.wsUrl, webSocketImpl: WebSocket, connectionParams: headers });
    const isSubscription = ({ query }: { query: Parameters<typeof getMainDefinition>[0] }): boolean => {
      const def = getMainDefinition(query);
      return def.kind === Kind.OPERATION_DEFINITION && def.operation === OperationTypeNode.SUBSCRIPTION;
    };
    const client = new ApolloClient({
      link: ApolloLink.split(
        isSubscription,
        new GraphQLWsLink(wsClient),
        new HttpLink({ uri: gw.gateway.url, headers }),
      ),
      cache: new InMemoryCache(),
    });
    const events: any[] = [];
    const errors: unknown[] = [];
    let sub: { unsubscribe(): void } | undefined;
    try {
      // The fragment works in a list query…
      const list = await client.query<any>({ query: LIST });
      expect(list.error).toBeUndefined();
      expect(list.data.volumes.nodes[0].details.plugin).toMatchObject({ id: expect.any(String) });
      // …and in a subscription: each change arrives as data, not as an error.
      sub = client.subscribe<any>({ query: WATCH }).subscribe({
        next: (r) => (r.error ? errors.push(r.error) : events.push(r.data!.volumeChanged)),
        error: (e) => errors.push(e),
      });
      await gw.waitOpen(1, 'the subscription');
      claim(gw.sim, ['vol-002']);
      await waitFor(() => events.some((e) => e.type === 'CLAIMED') || errors.length > 0, 'the change event');
      expect(errors).toEqual([]);
      expect(events.find((e) => e.type === 'CLAIMED').volume).toMatchObject({
        name: 'vol 2',
        details: { pluginId: 'aws-ebs0', plugin: { id: list.data.volumes.nodes[0].details.plugin.id } },
      });
    } finally {
      sub?.unsubscribe();
      client.stop();
      await wsClient.dispose();
    }
  });
});
