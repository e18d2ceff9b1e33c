/**
 * Apollo Client 3 (`@apollo/client-3`, 3.14) against the gateway as docs/clients.md configures it:
 * an `HttpLink` for queries and mutations and a `GraphQLWsLink` (graphql-ws) for subscriptions,
 * split by operation type, with the token in the link's headers and in `connectionParams`.
 * Apollo Client 4's same setup: test/federation/apollo-ws-link.test.ts; both versions'
 * `BatchHttpLink`: test/clients/apollo-batching.test.ts.
 */
import { createClient, type Client } from 'graphql-ws';
import { Kind, OperationTypeNode } from 'graphql';
import WebSocket from 'ws';
import { claim, MGMT, startWsGateway, stopAll, type WsGateway } from '../ws/helpers';

/** Apollo Client 3's modules are ESM with CommonJS builds that TypeScript's resolution does not see: loaded as Jest loads them. */
type Core3 = typeof import('@apollo/client-3/core', { with: { 'resolution-mode': 'import' } });
type Ws3 = typeof import('@apollo/client-3/link/subscriptions', { with: { 'resolution-mode': 'import' } });
type Utilities3 = typeof import('@apollo/client-3/utilities', { with: { 'resolution-mode': 'import' } });

const headers = { 'X-Nomad-Token': MGMT };

let gw: WsGateway;
let ws: Client;
let core3: Core3;
let client: InstanceType<Core3['ApolloClient']>;

beforeAll(async () => {
  core3 = await import('@apollo/client-3/core');
  const { GraphQLWsLink }: Ws3 = await import('@apollo/client-3/link/subscriptions');
  const { getMainDefinition }: Utilities3 = await import('@apollo/client-3/utilities');
  gw = await startWsGateway();
  ws = createClient({ url: gw.wsUrl, webSocketImpl: WebSocket, connectionParams: headers });
  const isSubscription = ({ query }: { query: Parameters<typeof getMainDefinition>[0] }): boolean => {
    const def = getMainDefinition(query);
    return def.kind === Kind.OPERATION_DEFINITION && def.operation === OperationTypeNode.SUBSCRIPTION;
  };
  client = new core3.ApolloClient({
    link: core3.split(isSubscription, new GraphQLWsLink(ws), new core3.HttpLink({ uri: gw.gateway.url, headers })),
    cache: new core3.InMemoryCache(),
  });
});
afterAll(async () => {
  client?.stop();
  await ws?.dispose();
  await stopAll();
});

it('should read over HttpLink, normalizing volumes by id', async () => {
  const r = await client.query<{ volumes: { nodes: Array<{ id: string; name: string }> } }>({
    query: core3.gql`{ volumes(first: 2) { nodes { id name } } }`,
  });
  expect(r.data.volumes.nodes.map((v) => v.name)).toEqual(['vol 0', 'vol 1']);
  const id = r.data.volumes.nodes[0]!.id;
  expect((client.cache.extract() as Record<string, unknown>)[`Volume:${id}`]).toMatchObject({ name: 'vol 0' });
});

it('should deliver events over GraphQLWsLink', async () => {
  const CLAIMS = core3.gql`subscription { volumeChanged(filter: { types: [CLAIMED] }) { type volume { id name } } }`;
  const event = await new Promise<any>((resolve, reject) => {
    const sub = client.subscribe({ query: CLAIMS }).subscribe({
      next: (r) => {
        if (r.data?.volumeChanged?.type === 'SUBSCRIBED') return void claim(gw.sim, ['vol-003']);
        sub.unsubscribe();
        resolve(r.data);
      },
      error: reject,
    });
  });
  expect(event).toEqual({
    volumeChanged: {
      __typename: 'VolumeChangeEvent',
      type: 'CLAIMED',
      volume: expect.objectContaining({ name: 'vol 3' }),
    },
  });
});
