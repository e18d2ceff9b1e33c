/**
 * `@apollo/client` 4 with a split link, as an app wires live status (issue 11 item 8): queries and
 * mutations over HTTP (`HttpLink`), subscriptions over graphql-ws (`GraphQLWsLink` on the
 * graphql-ws client, credentials in `connection_init`), both at the gateway's one URL. The gateway
 * runs its default live hub over a simulated OpenStack region, watched with the gateway's own
 * service credential; the app's token is the caller's.
 *
 * An attach mutation sent through the client arrives back as ATTACHING (the gateway's, on
 * accepting it) then ATTACHED (the watcher's); the events' `volume` normalizes into the same cache
 * entry as the earlier `volume(id:)` query, so a watched query shows IN_USE without a refetch.
 */
import { ApolloClient, ApolloLink, HttpLink, InMemoryCache, gql } from '@apollo/client';
import { GraphQLWsLink } from '@apollo/client/link/subscriptions';
import { getMainDefinition } from '@apollo/client/utilities';
import { Kind, OperationTypeNode } from 'graphql';
import { createClient, type Client } from 'graphql-ws';
import WebSocket from 'ws';
import {
  OS,
  disposeAll,
  startGatewayFor,
  startOpenStack,
  type GatewayUnderTest,
  type OpenStackUnderTest,
} from '../support/harness';
import { until } from '../support/until';

const VOLUME = gql`
  query Volume($id: ID!) {
    volume(id: $id) { id name status attachments { id state } }
  }
`;

const WATCH = gql`
  subscription Watch($volume: ID!) {
    attachmentChanged(target: { volume: $volume }) {
      type cursor observedAt
      volume { id status attachments { id state } }
      attachment { id state consumer { ... on VolumeServerConsumer { serverId } } }
    }
  }
`;

const ATTACH = gql`
  mutation Attach($i: AttachVolumeInput!) { attachVolume(input: $i) { operation { id kind state } } }
`;

describe('@apollo/client GraphQLWsLink against the gateway', () => {
  let os: OpenStackUnderTest;
  let gw: GatewayUnderTest;
  let wsClient: Client;
  let client: ApolloClient;
  let volumeId: string;
  let serverId: string;
  let nativeId: string;
  const sockets: string[] = [];

  beforeAll(async () => {
    // Transitions slow enough that ATTACHING is a state, as on a real cloud (~0.3–0.5 s: test/fixtures/recorded/nova-26/timings.md).
    os = await startOpenStack({ delays: { attachMs: 150, attachCompleteMs: 100 } });
    serverId = os.sim.seedServer({ project: os.demo, name: 'app-1' });
    nativeId = os.sim.seedVolume({ project: os.demo, name: 'ledger', size: 1 });
    // The watcher reads with the gateway's own credential; callers never see it.
    gw = await startGatewayFor([
      os.backend('os', {
        auth: { method: 'password', username: OS.adminUser, password: OS.adminPassword, projectName: 'demo' },
      }),
    ]);
    const headers = { 'X-Auth-Token': os.demoToken };
    const listed = await gw.gql('{ volumes(first: 10) { nodes { id nativeId } } }', {}, headers);
    volumeId = listed.body.data.volumes.nodes.find((v: { nativeId: string }) => v.nativeId === nativeId).id;

    wsClient = createClient({
      url: gw.gateway.url.replace(/^http/, 'ws'),
      // Node 20 has no global WebSocket; browsers pass nothing here.
      webSocketImpl: WebSocket,
      connectionParams: headers,
      on: { connected: (socket) => void sockets.push((socket as WebSocket).url) },
    });
    const http = new HttpLink({ uri: gw.gateway.url, headers });
    const ws = new GraphQLWsLink(wsClient);
    const isSubscription = ({ query }: { query: Parameters<typeof getMainDefinition>[0] }): boolean => {
      const def = getMainDefinition(query);
      return def.kind === Kind.OPERATION_DEFINITION && def.operation === OperationTypeNode.SUBSCRIPTION;
    };
    client = new ApolloClient({ link: ApolloLink.split(isSubscription, ws, http), cache: new InMemoryCache() });
  }, 30_000);

  afterAll(async () => {
    client?.stop();
    await wsClient?.dispose();
    await disposeAll();
  });

  it('receives ATTACHING then ATTACHED for an attach made over HTTP, and the cached volume query follows the event', async () => {
    // The app's view of the volume, from HTTP, kept in the cache and watched.
    const watched: Array<{ status: string; attachments: Array<{ state: string }> }> = [];
    const query = client.watchQuery<any>({ query: VOLUME, variables: { id: volumeId } });
    const querySub = query.subscribe({ next: (r) => r.data?.volume && watched.push(r.data.volume) });
    await until(() => watched.length > 0, 'the volume query');
    expect(watched[0]).toMatchObject({ id: volumeId, name: 'ledger', status: 'AVAILABLE', attachments: [] });

    const events: any[] = [];
    const errors: unknown[] = [];
    const sub = client.subscribe<any>({ query: WATCH, variables: { volume: volumeId } }).subscribe({
      next: (r) => (r.error ? errors.push(r.error) : events.push(r.data!.attachmentChanged)),
      error: (e) => errors.push(e),
    });
    try {
      // Every subscription starts with SUBSCRIBED: from then on nothing is missed.
      await until(() => events.length > 0 || errors.length > 0, 'SUBSCRIBED');
      expect(errors).toEqual([]);
      expect(events[0]).toMatchObject({ type: 'SUBSCRIBED', volume: null });
      expect(sockets).toEqual([gw.gateway.url.replace(/^http/, 'ws')]);

      // The mutation goes over HTTP through the same client (the split link's other side).
      const m = await client.mutate<any>({
        mutation: ATTACH,
        variables: { i: { volumeId, target: { server: { serverId } } } },
      });
      expect(m.data.attachVolume.operation).toMatchObject({ kind: 'ATTACH_VOLUME' });

      await until(() => events.some((e) => e.type === 'ATTACHED') || errors.length > 0, 'ATTACHED');
      expect(errors).toEqual([]);
      const types = events.map((e) => e.type);
      expect(types.indexOf('ATTACHING')).toBeGreaterThan(0);
      expect(types.indexOf('ATTACHED')).toBeGreaterThan(types.indexOf('ATTACHING'));
      const attaching = events.find((e) => e.type === 'ATTACHING');
      const attached = events.find((e) => e.type === 'ATTACHED');
      expect(attaching.attachment).toMatchObject({ state: 'ATTACHING', consumer: { serverId } });
      expect(attached.attachment).toMatchObject({ state: 'ATTACHED', consumer: { serverId } });
      expect(attached.volume).toMatchObject({ id: volumeId, status: 'IN_USE', attachments: [{ state: 'ATTACHED' }] });
      // Cursors are ordered and distinct.
      expect(new Set(events.map((e) => e.cursor)).size).toBe(events.length);

      // Normalization: the event's `volume` went into Volume:<id>, the query's entry; the watched
      // query re-rendered from the cache with IN_USE, and a cache-only read agrees.
      await until(() => watched.at(-1)?.status === 'IN_USE', 'the watched query to show IN_USE');
      expect(watched.at(-1)).toMatchObject({
        id: volumeId,
        name: 'ledger',
        status: 'IN_USE',
        attachments: [{ state: 'ATTACHED' }],
      });
      const cached = await client.query<any>({ query: VOLUME, variables: { id: volumeId }, fetchPolicy: 'cache-only' });
      expect(cached.data.volume).toMatchObject({
        status: 'IN_USE',
        attachments: [{ id: attached.attachment.id, state: 'ATTACHED' }],
      });
      expect(client.cache.identify({ __typename: 'Volume', id: volumeId })).toBe(`Volume:${volumeId}`);
      // The backend agrees: this was a real attach.
      expect(os.sim.volume(nativeId)?.status).toBe('in-use');
    } finally {
      sub.unsubscribe();
      querySub.unsubscribe();
    }
  }, 40_000);

  it("keeps a list's consumer when a later result selects fewer consumer fields, because consumers have an id (issue 19)", async () => {
    // The volume is attached to the server by the test before. A list selects the consumer's
    // server and name; a later result (an event, or here a query) selects only its serverId.
    const list = (withId: boolean) => gql`
      query List($id: ID!) { volume(id: $id) { id attachments { id state consumer { ... on VolumeServerConsumer { ${withId ? 'id ' : ''}server { id } name } } } } }
    `;
    const narrow = (withId: boolean) => gql`
      query One($a: ID!) { volumeAttachment(id: $a) { id consumer { ... on VolumeServerConsumer { ${withId ? 'id ' : ''}serverId } } } }
    `;
    const readBack = async (withId: boolean): Promise<unknown> => {
      const fresh = new ApolloClient({
        link: new HttpLink({ uri: gw.gateway.url, headers: { 'X-Auth-Token': os.demoToken } }),
        cache: new InMemoryCache(),
      });
      const listed = await fresh.query<any>({
        query: list(withId),
        variables: { id: volumeId },
        fetchPolicy: 'network-only',
      });
      const attachment = listed.data.volume.attachments[0];
      expect(attachment.consumer).toMatchObject({ server: { id: serverId }, name: 'app-1' });
      await fresh.query<any>({ query: narrow(withId), variables: { a: attachment.id }, fetchPolicy: 'network-only' });
      const read = fresh.readQuery<any>({ query: list(withId), variables: { id: volumeId } });
      fresh.stop();
      return read?.volume.attachments[0].consumer ?? null;
    };
    // Without the id the consumer is stored inside its attachment and replaced: the list reads back as null.
    expect(await readBack(false)).toBeNull();
    // With it, both results merge into one VolumeServerConsumer:<id> entry.
    expect(await readBack(true)).toMatchObject({
      __typename: 'VolumeServerConsumer',
      id: expect.any(String),
      server: { id: serverId },
      name: 'app-1',
    });
  }, 30_000);
});
