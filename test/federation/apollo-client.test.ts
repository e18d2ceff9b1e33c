/**
 * `@apollo/client` 4 in Node, as an app would use it (HttpLink over Node's global fetch,
 * `InMemoryCache` with default settings), against `@apollo/gateway` over the compute subgraph.
 * Proves the import paths and the cache's normalization under Jest; the v2 proof tests build on it.
 */
import { ApolloClient, HttpLink, InMemoryCache, gql } from '@apollo/client';
import { startComputeSubgraph, type ComputeSubgraph } from './compute-subgraph';
import { startSupergraph, stopAll, type RunningFederatedGateway } from './supergraph';

const WEB = {
  id: '0b0c1f4e-7d5e-4a37-a3b5-000000000001',
  name: 'web-1',
  host: { id: 'host-a', name: 'compute-a.example' },
};
const DB = { id: '0b0c1f4e-7d5e-4a37-a3b5-000000000002', name: 'db-1', status: 'SHUTOFF' };

/** The shape of `{ inventoryServers { id name } }`. */
interface ServerList {
  inventoryServers: Array<{ __typename: 'Server'; id: string; name: string }>;
}

describe('@apollo/client through the gateway', () => {
  let compute: ComputeSubgraph;
  let gateway: RunningFederatedGateway;
  let client: ApolloClient;
  let cache: InMemoryCache;

  beforeAll(async () => {
    compute = await startComputeSubgraph([WEB, DB]);
    gateway = await startSupergraph([compute]);
    client = new ApolloClient({
      link: new HttpLink({ uri: gateway.url, headers: { 'X-Auth-Token': 'token-1' } }),
      cache: (cache = new InMemoryCache()),
    });
  });
  afterAll(async () => {
    client.stop();
    await stopAll(gateway, compute);
  });

  it('normalizes servers by id: two root fields fill one cache entry', async () => {
    const list = await client.query<ServerList>({ query: gql`{ inventoryServers { id name } }` });
    expect(list.data?.inventoryServers).toEqual([
      { __typename: 'Server', id: WEB.id, name: 'web-1' },
      { __typename: 'Server', id: DB.id, name: 'db-1' },
    ]);
    await client.query({
      query: gql`query($id: ID!) { inventoryServer(id: $id) { id status host { id name } } }`,
      variables: { id: WEB.id },
    });
    const id = cache.identify({ __typename: 'Server', id: WEB.id });
    expect(id).toBe(`Server:${WEB.id}`);
    // Fields from both queries on one normalized object, the host its own entry.
    expect(cache.extract()[id!]).toEqual({
      __typename: 'Server',
      id: WEB.id,
      name: 'web-1',
      status: 'ACTIVE',
      host: { __ref: 'Host:host-a' },
    });
    expect(compute.requests()).toHaveLength(2);
    expect(compute.requests().every((r) => r.headers['x-auth-token'] === 'token-1')).toBe(true);
  });

  it('answers a repeated query from the cache (cache-first): no request reaches the subgraph', async () => {
    const before = compute.requests().length;
    const again = await client.query<ServerList>({ query: gql`{ inventoryServers { id name } }` });
    expect(again.data?.inventoryServers).toHaveLength(2);
    expect(compute.requests()).toHaveLength(before);
  });
});
