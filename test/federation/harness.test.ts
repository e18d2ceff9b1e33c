/**
 * Proves the federation harness with Apollo's unmodified tools: the compute subgraph and a tiny
 * tags subgraph (defined here) compose with `@apollo/composition`, and `@apollo/gateway` joins
 * them over real HTTP. Request counts come from what each subgraph server received.
 */
import { COMPUTE_TYPE_DEFS, startComputeSubgraph, type ComputeSubgraph, type ServerSeed } from './compute-subgraph';
import { startSubgraphServer, type RunningSubgraph } from './subgraph-server';
import {
  composeSupergraph,
  CompositionFailedError,
  startSupergraph,
  stopAll,
  type RunningFederatedGateway,
} from './supergraph';

const HOST_A = { id: 'host-a', name: 'compute-a.example' };
const HOST_B = { id: 'host-b', name: 'compute-b.example' };
const SERVERS: ServerSeed[] = [
  { id: '6f1b6c52-4e0d-4b0e-9a52-1d0a1a000001', name: 'web-1', host: HOST_A },
  { id: '6f1b6c52-4e0d-4b0e-9a52-1d0a1a000002', name: 'db-1', status: 'SHUTOFF', host: HOST_B },
  { id: '6f1b6c52-4e0d-4b0e-9a52-1d0a1a000003', name: 'building-1', status: 'BUILD' },
];
const TAGS: Record<string, string[]> = { [SERVERS[0]!.id]: ['web', 'prod'], [SERVERS[1]!.id]: ['db'] };

/** A second team's subgraph: contributes `Server.tags` by key, and lists servers by tag. */
const TAGS_TYPE_DEFS = /* GraphQL */ `
extend schema @link(url: "https://specs.apollo.dev/federation/v2.9", import: ["@key"])
type Query {
  taggedServers(tag: String!): [Server!]!
}
type Server @key(fields: "id") {
  id: ID!
  tags: [String!]!
}
`;

const startTags = (): Promise<RunningSubgraph> =>
  startSubgraphServer({
    name: 'tags',
    typeDefs: TAGS_TYPE_DEFS,
    resolvers: {
      Query: {
        taggedServers: (_: unknown, a: { tag: string }) =>
          Object.keys(TAGS)
            .filter((id) => TAGS[id]!.includes(a.tag))
            .map((id) => ({ id })),
      },
      Server: {
        __resolveReference: (ref: { id: string }) => ({ id: ref.id }),
        tags: (s: { id: string }) => TAGS[s.id] ?? [],
      },
    },
  });

const CREDENTIALS = {
  'X-Auth-Token': 'keystone-token-1',
  'X-Nomad-Token-nomad1': 'nomad-secret-1',
  'X-Unrelated': 'not-forwarded',
};

describe('federation harness: compute + tags subgraphs behind @apollo/gateway', () => {
  let compute: ComputeSubgraph;
  let tags: RunningSubgraph;
  let gateway: RunningFederatedGateway;

  beforeAll(async () => {
    compute = await startComputeSubgraph(SERVERS);
    tags = await startTags();
    gateway = await startSupergraph([compute, tags]);
  });
  afterAll(() => stopAll(gateway, tags, compute));
  beforeEach(() => {
    compute.resetRequests();
    tags.resetRequests();
  });

  it('composes with no errors and no hints', () => {
    const c = composeSupergraph([compute, tags]);
    expect(c.errors.map((e) => e.message)).toEqual([]);
    expect(c.hints.map((h) => `${h.definition.code}: ${h.message}`)).toEqual([]);
    expect(c.supergraphSdl).toMatch(
      /type Server\s+@join__type\(graph: COMPUTE, key: "id"\)\s+@join__type\(graph: TAGS, key: "id"\)/,
    );
  });

  it('joins servers to their tags: one root fetch from compute, one batched _entities fetch from tags', async () => {
    const res = await gateway.post(
      '{ inventoryServers { id name status host { id name } tags } }',
      undefined,
      CREDENTIALS,
    );
    expect(res.status).toBe(200);
    expect(res.body.errors).toBeUndefined();
    expect(res.body.data.inventoryServers).toEqual(
      SERVERS.map((s) => ({
        id: s.id,
        name: s.name,
        status: s.status ?? 'ACTIVE',
        host: s.host ?? null,
        tags: TAGS[s.id] ?? [],
      })),
    );
    // Expected: 1 request to compute (the root field, with host resolved locally) and 1 to tags
    // carrying all 3 servers as representations: the query planner batches entity fetches.
    expect(compute.requests().map((r) => r.representations)).toEqual([0]);
    expect(tags.requests().map((r) => r.representations)).toEqual([3]);
    expect(tags.requests()[0]!.query).toContain('_entities');
  });

  it('resolves the other way: tags lists ids, compute resolves them by reference in one fetch', async () => {
    const res = await gateway.post(
      'query($t: String!) { taggedServers(tag: $t) { id name host { name } } }',
      { t: 'prod' },
      CREDENTIALS,
    );
    expect(res.body.errors).toBeUndefined();
    expect(res.body.data.taggedServers).toEqual([{ id: SERVERS[0]!.id, name: 'web-1', host: { name: HOST_A.name } }]);
    expect(tags.requests().map((r) => r.representations)).toEqual([0]);
    expect(compute.requests().map((r) => r.representations)).toEqual([1]);
  });

  it('forwards the credential headers it is told to, and no others, to every subgraph', async () => {
    await gateway.post('{ inventoryServers { id tags } }', undefined, CREDENTIALS);
    for (const sg of [compute, tags]) {
      const [req] = sg.requests();
      expect(req?.headers['x-auth-token']).toBe('keystone-token-1');
      expect(req?.headers['x-nomad-token-nomad1']).toBe('nomad-secret-1');
      expect(req?.headers['x-unrelated']).toBeUndefined();
    }
  });

  it('sees servers added after start (the seed is live data, not a snapshot)', async () => {
    compute.addServer({ id: '6f1b6c52-4e0d-4b0e-9a52-1d0a1a000004', name: 'late-1', host: HOST_A });
    const res = await gateway.post(
      '{ inventoryServer(id: "6f1b6c52-4e0d-4b0e-9a52-1d0a1a000004") { name host { name } tags } }',
    );
    expect(res.body.data.inventoryServer).toEqual({ name: 'late-1', host: { name: HOST_A.name }, tags: [] });
    expect(compute.requests().map((r) => r.representations)).toEqual([0]);
  });
});

describe('federation harness: composition failures', () => {
  it('reports a conflicting field as an error and refuses to start a gateway', async () => {
    // `Server.name` in two subgraphs, not @shareable and of different types: a real conflict.
    const clash = {
      name: 'clash',
      url: 'http://127.0.0.1:9/',
      typeDefs: TAGS_TYPE_DEFS.replace('tags: [String!]!', 'name: Int'),
    };
    const compute = { name: 'compute', url: 'http://127.0.0.1:9/', typeDefs: COMPUTE_TYPE_DEFS };
    const c = composeSupergraph([compute, clash]);
    expect(c.supergraphSdl).toBeUndefined();
    expect(c.errors.length).toBeGreaterThan(0);
    await expect(startSupergraph([compute, clash])).rejects.toBeInstanceOf(CompositionFailedError);
  });
});

describe('federation harness: references to entities the owner does not have', () => {
  // The pattern the volume subgraph will use: it references `Server` by key without resolving it.
  const VOLUMES_TYPE_DEFS = /* GraphQL */ `
extend schema @link(url: "https://specs.apollo.dev/federation/v2.9", import: ["@key"])
type Query { attachments: [VolumeAttachmentStub!]! }
type VolumeAttachmentStub { id: ID! server: Server }
type Server @key(fields: "id", resolvable: false) { id: ID! }
`;
  let compute: ComputeSubgraph;
  let volumes: RunningSubgraph;
  let gateway: RunningFederatedGateway;
  beforeAll(async () => {
    compute = await startComputeSubgraph(SERVERS.slice(0, 1));
    volumes = await startSubgraphServer({
      name: 'volumes',
      typeDefs: VOLUMES_TYPE_DEFS,
      resolvers: {
        Query: {
          attachments: () => [
            { id: 'a1', server: { id: SERVERS[0]!.id } },
            { id: 'a2', server: { id: 'deleted-server' } },
          ],
        },
      },
    });
    gateway = await startSupergraph([compute, volumes]);
  });
  afterAll(() => stopAll(gateway, volumes, compute));

  it('nulls a nullable reference whose entity the owner returns as null, keeping the rest', async () => {
    const res = await gateway.post('{ attachments { id server { id name } } }');
    expect(res.body.errors).toBeUndefined();
    expect(res.body.data.attachments).toEqual([
      { id: 'a1', server: { id: SERVERS[0]!.id, name: 'web-1' } },
      { id: 'a2', server: null },
    ]);
    // Both references in one _entities fetch.
    expect(compute.requests().map((r) => r.representations)).toEqual([2]);
  });
});
