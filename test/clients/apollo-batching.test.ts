/**
 * Apollo Client's `BatchHttpLink`, 4 and 3 (`@apollo/client-3`, 3.14), against the gateway over
 * HTTP (issue 31, item 2): operations issued together go as one POST of a JSON array, each answer
 * reaches its own query, an operation that fails does not fail the others, and a batch over
 * `MAX_BATCH_SIZE` is refused `413` `BATCH_TOO_LARGE`, which each of its operations sees.
 * Before issue 31 Apollo Server refused every batch ("Operation batching disabled.").
 */
import { ApolloClient, InMemoryCache, gql, type ErrorLike } from '@apollo/client';
import { BatchHttpLink } from '@apollo/client/link/batch-http';
import { disposeAll, MGMT, seedVolumes, startGatewayFor, startNomad, type GatewayUnderTest } from '../support/harness';

const headers = { 'X-Nomad-Token': MGMT };
const VOLUME = gql`
  query Volume($name: String!) {
    volumes(first: 1, filter: { name: $name }) { nodes { id name } }
  }
`;
const BROKEN = gql`
  query Broken { storageBackends { nope } }
`;
const names = ['vol 0', 'vol 1', 'vol 2'];

/** Apollo Client 3's modules are ESM with CommonJS builds that TypeScript's resolution does not see: loaded as Jest loads them. */
type Core3 = typeof import('@apollo/client-3/core', { with: { 'resolution-mode': 'import' } });
type Batch3 = typeof import('@apollo/client-3/link/batch-http', { with: { 'resolution-mode': 'import' } });
let core3: Core3;
let batch3: Batch3;
let gw: GatewayUnderTest;
let capped: GatewayUnderTest;
/** The bodies the links POSTed, parsed. */
const sent: unknown[] = [];
const recording: typeof fetch = (input, init) => {
  sent.push(JSON.parse(init?.body as string));
  return fetch(input, init);
};

beforeAll(async () => {
  core3 = await import('@apollo/client-3/core');
  batch3 = await import('@apollo/client-3/link/batch-http');
  const sim = await startNomad();
  seedVolumes(sim, 4);
  gw = await startGatewayFor([{ id: 'east', url: sim.url }]);
  capped = await startGatewayFor([{ id: 'east', url: sim.url }], { http: { maxBatchSize: 2 } });
});
afterAll(disposeAll);
beforeEach(() => void (sent.length = 0));

/** The three volume queries and the broken one issued together, as an app's components would. */
async function together(query: (q: typeof VOLUME, variables: Record<string, unknown>) => Promise<unknown>) {
  const settled = await Promise.allSettled([...names.map((name) => query(VOLUME, { name })), query(BROKEN, {})]);
  return settled.map((s) => (s.status === 'fulfilled' ? s.value : { rejected: s.reason as ErrorLike }));
}

const volumeData = (name: string) => ({
  volumes: { __typename: 'VolumeConnection', nodes: [{ __typename: 'Volume', id: expect.any(String), name }] },
});

/** One Apollo Client version: its client over a BatchHttpLink, and where its errors keep what the gateway answered. */
interface Version {
  query(url: string): (q: typeof VOLUME, variables: Record<string, unknown>) => Promise<unknown>;
  /** The first GraphQL error's code of a rejected operation. */
  graphQLCode(err: any): string | undefined;
  /** The HTTP status and parsed body of a rejected batch. */
  httpAnswer(err: any): { status?: number; body: any };
}

/** A client over `link`, queried without its cache (each query must reach the gateway). */
const querying =
  (client: { query(o: object): Promise<unknown>; stop(): void }) =>
  (query: typeof VOLUME, variables: Record<string, unknown>) =>
    client.query({ query, variables, fetchPolicy: 'no-cache' });

const linkOptions = (url: string) => ({ uri: url, headers, fetch: recording, batchMax: 10, batchInterval: 20 });
const clients: Array<{ stop(): void }> = [];
afterAll(() => clients.forEach((c) => c.stop()));

const VERSIONS: Array<[string, Version]> = [
  [
    'Apollo Client 4',
    {
      query: (url) => {
        const c = new ApolloClient({ link: new BatchHttpLink(linkOptions(url)), cache: new InMemoryCache() });
        clients.push(c);
        return querying(c);
      },
      graphQLCode: (err) => err.errors?.[0]?.extensions?.code,
      httpAnswer: (err) => ({ status: err.statusCode, body: JSON.parse(err.bodyText) }),
    },
  ],
  [
    'Apollo Client 3',
    {
      query: (url) => {
        const c = new core3.ApolloClient({
          link: new batch3.BatchHttpLink(linkOptions(url)),
          cache: new core3.InMemoryCache(),
        });
        clients.push(c);
        return querying(c);
      },
      graphQLCode: (err) => err.graphQLErrors?.[0]?.extensions?.code,
      httpAnswer: (err) => ({ status: err.networkError?.statusCode, body: err.networkError?.result }),
    },
  ],
];

describe.each(VERSIONS)('%s BatchHttpLink', (_name, v) => {
  it('should send the operations as one batch and give each its own answer, the failed one alone failing', async () => {
    const results = await together(v.query(gw.gateway.url));
    expect(sent).toHaveLength(1);
    expect(sent[0]).toHaveLength(4);
    expect(results.slice(0, 3).map((r: any) => r.data)).toEqual(names.map(volumeData));
    expect(v.graphQLCode((results[3] as { rejected: unknown }).rejected)).toBe('GRAPHQL_VALIDATION_FAILED');
  });

  it('should see BATCH_TOO_LARGE on every operation of a batch over MAX_BATCH_SIZE', async () => {
    const results = await together(v.query(capped.gateway.url));
    expect(sent).toHaveLength(1);
    for (const r of results as Array<{ rejected?: unknown }>) {
      const answer = v.httpAnswer(r.rejected);
      expect(answer.status).toBe(413);
      expect(answer.body.errors[0].extensions).toEqual({ code: 'BATCH_TOO_LARGE', maxBatchSize: 2, operations: 4 });
    }
  });
});
