/**
 * `@apollo/client` 4 used as an app would (HttpLink over Node's fetch, `InMemoryCache` with default
 * settings plus the gateway's `possibleTypes`) against the v2 gateway in front of the Nomad and
 * OpenStack simulators (issue 10, items 5 and 6): volumes normalize by id, a mutation's result
 * updates the cache, an operation is followed to its end, fragments on our unions need
 * `possibleTypes`, and partial results behave as documented under both error policies.
 *
 * `possibleTypes` is built here from the gateway's introspection (`schema/generated/possible-types.ts`,
 * graphql-codegen's fragment-matcher output, is not on this branch yet): the same map, from the
 * served schema instead of the SDL files.
 */
import {
  ApolloClient,
  CombinedGraphQLErrors,
  HttpLink,
  InMemoryCache,
  gql,
  type PossibleTypesMap,
} from '@apollo/client';
import type { NomadSimulator } from '../../simulators/nomad';
import {
  MGMT,
  closedPortUrl,
  disposeAll,
  seedVolumes,
  startGatewayFor,
  startNomad,
  startOpenStack,
  type GatewayUnderTest,
  type OpenStackUnderTest,
} from '../support/harness';

/** Unions and interfaces of the served schema → their member types (`_Entity` left out, as codegen's `federation: true` does). */
async function possibleTypesOf(gw: GatewayUnderTest): Promise<PossibleTypesMap> {
  const res = await gw.gql('{ __schema { types { kind name possibleTypes { name } } } }');
  const out: PossibleTypesMap = {};
  for (const t of res.body.data.__schema.types)
    if (t.possibleTypes && t.name !== '_Entity')
      out[t.name] = t.possibleTypes.map((p: { name: string }) => p.name).sort();
  return out;
}

/** An app's client: default cache settings (plus `possibleTypes` when given); counts the HTTP requests it sends and keeps their answers. */
function appClient(
  url: string,
  headers: Record<string, string>,
  cacheOptions: ConstructorParameters<typeof InMemoryCache>[0] = {},
) {
  const answers: unknown[] = [];
  const counted: typeof fetch = async (input, init) => {
    const res = await fetch(input, init);
    answers.push(await res.clone().json());
    return res;
  };
  const cache = new InMemoryCache(cacheOptions);
  const client = new ApolloClient({ link: new HttpLink({ uri: url, headers, fetch: counted }), cache });
  return { client, cache, answers };
}

const LIST = gql`
  query List {
    volumes(first: 50) {
      nodes { id name status backendStatus sizeBytes }
      omittedBackends { backend { id } reason code }
    }
  }
`;

describe('@apollo/client against the v2 gateway', () => {
  let os: OpenStackUnderTest;
  let nomad: NomadSimulator;
  let gw: GatewayUnderTest;
  let possibleTypes: PossibleTypesMap;
  let serverId: string;
  /** Cinder volume name → Cinder id. */
  const nativeIds: Record<string, string> = {};
  let both: Record<string, string>;
  const clients: ApolloClient[] = [];
  const track = <T extends { client: ApolloClient }>(c: T): T => (clients.push(c.client), c);

  beforeAll(async () => {
    os = await startOpenStack({ delays: { attachMs: 80, attachCompleteMs: 40 } });
    serverId = os.sim.seedServer({ project: os.demo, name: 'app-1' });
    for (const [name, size] of [
      ['alpha', 1],
      ['beta', 2],
      ['gamma', 3],
    ] as const)
      nativeIds[name] = os.sim.seedVolume({ project: os.demo, name, size });
    os.sim.attachNow(serverId, nativeIds.gamma!);
    nomad = await startNomad();
    seedVolumes(nomad, 2);
    gw = await startGatewayFor([{ id: 'east', url: nomad.url }, os.backend('os', { operationTimeoutMs: 10_000 })], {
      operationOptions: { pollMs: 20, maxPollMs: 50 },
    });
    possibleTypes = await possibleTypesOf(gw);
    both = { 'X-Auth-Token': os.demoToken, 'X-Nomad-Token-east': MGMT };
  });
  afterAll(async () => {
    for (const c of clients) c.stop();
    await disposeAll();
  });

  /** The global id of a volume by name (a list read outside any client cache). */
  const idOf = async (name: string): Promise<string> =>
    (await gw.gql('{ volumes(first: 50) { nodes { id name } } }', {}, both)).body.data.volumes.nodes.find(
      (v: any) => v.name === name,
    ).id;

  it('normalizes volumes by id: every listed volume is one cache entry, and a repeated read is served from the cache', async () => {
    const { client, cache, answers } = track(appClient(gw.gateway.url, both, { possibleTypes }));
    const { data } = await client.query<any>({ query: LIST });
    const nodes = data.volumes.nodes;
    expect(nodes.map((v: any) => v.name)).toEqual(['vol 0', 'vol 1', 'alpha', 'beta', 'gamma']);
    const store = cache.extract() as Record<string, any>;
    for (const v of nodes)
      expect(store[`Volume:${v.id}`]).toEqual({
        __typename: 'Volume',
        id: v.id,
        name: v.name,
        status: v.status,
        backendStatus: v.backendStatus,
        sizeBytes: v.sizeBytes,
      });
    // The list holds references, not copies.
    expect(store['ROOT_QUERY']['volumes({"first":50})'].nodes).toEqual(
      nodes.map((v: any) => ({ __ref: `Volume:${v.id}` })),
    );
    const gamma = nodes.find((v: any) => v.name === 'gamma');

    // `volume(id:)` is another root field: the default cache asks once, and merges the answer into the same entry.
    const ONE = gql`query One($id: ID!) { volume(id: $id) { id name status createdAt } }`;
    const one = await client.query<any>({ query: ONE, variables: { id: gamma.id } });
    expect(one.data.volume).toMatchObject({ id: gamma.id, name: 'gamma', status: 'IN_USE' });
    expect(answers).toHaveLength(2);
    expect((cache.extract() as any)[`Volume:${gamma.id}`]).toMatchObject({
      name: 'gamma',
      sizeBytes: 3 * 2 ** 30,
      createdAt: one.data.volume.createdAt,
    });
    // The second query for that volume is served from the cache: no request leaves the client.
    const again = await client.query<any>({ query: ONE, variables: { id: gamma.id } });
    expect(again.data.volume).toEqual(one.data.volume);
    expect(answers).toHaveLength(2);
    // So is a fragment read of any listed volume.
    const alpha = nodes.find((v: any) => v.name === 'alpha');
    expect(
      cache.readFragment({
        id: cache.identify({ __typename: 'Volume', id: alpha.id }),
        fragment: gql`fragment A on Volume { name sizeBytes }`,
      }),
    ).toEqual({ __typename: 'Volume', name: 'alpha', sizeBytes: 2 ** 30 });
    expect(answers).toHaveLength(2);
  });

  it("applies a mutation's result to the cached volume, so the cached list shows it without a refetch", async () => {
    const { client, cache, answers } = track(appClient(gw.gateway.url, both, { possibleTypes }));
    await client.query({ query: LIST });
    const id = await idOf('alpha');
    const UPDATE = gql`mutation Rename($i: UpdateVolumeInput!) { updateVolume(input: $i) { volume { id name } operation { id kind state } } }`;
    const m = await client.mutate<any>({ mutation: UPDATE, variables: { i: { volumeId: id, name: 'alpha-renamed' } } });
    expect(m.data.updateVolume).toMatchObject({
      volume: { id, name: 'alpha-renamed' },
      operation: { kind: 'UPDATE_VOLUME', state: 'SUCCEEDED' },
    });
    expect(os.sim.volume(nativeIds.alpha!)?.name).toBe('alpha-renamed');
    expect((cache.extract() as any)[`Volume:${id}`].name).toBe('alpha-renamed');
    const cached = await client.query<any>({ query: LIST, fetchPolicy: 'cache-only' });
    expect(cached.data.volumes.nodes.map((v: any) => v.name)).toEqual([
      'vol 0',
      'vol 1',
      'alpha-renamed',
      'beta',
      'gamma',
    ]);
    // The list and the mutation: nothing refetched.
    expect(answers).toHaveLength(2);
    // Back to its name for the other tests.
    expect(
      (await client.mutate<any>({ mutation: UPDATE, variables: { i: { volumeId: id, name: 'alpha' } } })).data
        .updateVolume.volume.name,
    ).toBe('alpha');
  });

  it("follows an attach's operation to SUCCEEDED by polling volumeOperation, the cached volume's status agreeing with its backendStatus at every step", async () => {
    const { client, cache } = track(appClient(gw.gateway.url, both, { possibleTypes }));
    const id = await idOf('beta');
    // Cinder's word → the gateway's status, for the states an attach passes through (docs/openstack.md).
    const agreed: Record<string, string> = {
      available: 'AVAILABLE',
      reserved: 'RESERVED',
      attaching: 'ATTACHING',
      'in-use': 'IN_USE',
    };
    const cachedVolume = (): { status: string; backendStatus: string } => (cache.extract() as any)[`Volume:${id}`];
    const seen: string[] = [];
    const check = (): void => {
      const v = cachedVolume();
      seen.push(`${v.status}/${v.backendStatus}`);
      expect(agreed[v.backendStatus]).toBe(v.status);
    };
    // An app's shared fragment on the union; it reaches the cache only with possibleTypes (next test).
    const TARGET = gql`fragment Target on VolumeOperationTarget { ... on Volume { id status backendStatus } }`;
    const ATTACH = gql`
      mutation Attach($i: AttachVolumeInput!) { attachVolume(input: $i) { operation { id kind state targetId } volume { id status backendStatus } } }
    `;
    const POLL = gql`
      query Poll($id: ID!) { volumeOperation(id: $id) { id state backendStatus target { ...Target } } }
      ${TARGET}
    `;
    const m = await client.mutate<any>({
      mutation: ATTACH,
      variables: { i: { volumeId: id, target: { server: { serverId } } } },
    });
    const op = m.data.attachVolume.operation;
    expect(op).toMatchObject({ kind: 'ATTACH_VOLUME', targetId: id });
    expect(['PENDING', 'RUNNING']).toContain(op.state);
    check();
    let state = op.state;
    for (let i = 0; i < 200 && !['SUCCEEDED', 'FAILED', 'TIMED_OUT'].includes(state); i++) {
      await new Promise((r) => setTimeout(r, 20));
      const polled = await client.query<any>({ query: POLL, variables: { id: op.id }, fetchPolicy: 'network-only' });
      state = polled.data.volumeOperation.state;
      // The target went into the volume's own entry.
      expect(polled.data.volumeOperation.target).toEqual({ __typename: 'Volume', id, ...cachedVolume() });
      check();
    }
    expect(state).toBe('SUCCEEDED');
    expect(cachedVolume()).toMatchObject({ status: 'IN_USE', backendStatus: 'in-use' });
    expect((cache.extract() as any)[`VolumeOperation:${op.id}`]).toMatchObject({
      state: 'SUCCEEDED',
      backendStatus: 'in-use',
    });
    expect(os.sim.volume(nativeIds.beta!)?.status).toBe('in-use');
    // The mutation's answer and at least one poll were checked (how many depends on timing).
    expect(seen.length).toBeGreaterThan(1);
    expect(seen.at(-1)).toBe('IN_USE/in-use');
  });

  it('resolves fragments on the unions (VolumeDetails, VolumeConsumer, VolumeOperationTarget) in the cache only with possibleTypes', async () => {
    expect(possibleTypes).toEqual({
      VolumeConsumer: ['VolumeAllocationConsumer', 'VolumeHostConsumer', 'VolumeServerConsumer'],
      VolumeDetails: ['CinderVolumeDetails', 'MemoryVolumeDetails', 'NomadVolumeDetails'],
      VolumeOperationTarget: ['Volume', 'VolumeSnapshot'],
      VolumeProblemEvidence: [
        'VolumeAttachmentDriftEvidence',
        'VolumeClaimEvidence',
        'VolumePluginEvidence',
        'VolumeStatusEvidence',
      ],
    });
    const id = await idOf('gamma');
    // Fragments as apps colocate them: named, on the union, with a member's fields inside.
    const QUERY = gql`
      query Details($id: ID!) { volume(id: $id) { id details { ...Details } attachments { id consumer { ...Consumer } } ...VolumeAsTarget } }
      fragment Details on VolumeDetails { ... on CinderVolumeDetails { cinderStatus sizeGiB volumeType } ... on NomadVolumeDetails { pluginId } }
      fragment Consumer on VolumeConsumer { ... on VolumeServerConsumer { serverId name } }
      fragment VolumeAsTarget on VolumeOperationTarget { ... on Volume { name } }
    `;
    const withTypes = track(appClient(gw.gateway.url, both, { possibleTypes }));
    const withoutTypes = track(appClient(gw.gateway.url, both));
    const good = (await withTypes.client.query<any>({ query: QUERY, variables: { id } })).data.volume;
    expect(good).toMatchObject({
      id,
      name: 'gamma',
      details: { __typename: 'CinderVolumeDetails', cinderStatus: 'IN_USE', sizeGiB: 3, volumeType: '__DEFAULT__' },
      attachments: [{ consumer: { __typename: 'VolumeServerConsumer', serverId, name: 'app-1' } }],
    });
    const bad = (await withoutTypes.client.query<any>({ query: QUERY, variables: { id } })).data.volume;
    // The gateway sent every field; the cache without possibleTypes cannot tell that CinderVolumeDetails
    // is a VolumeDetails, so it neither stores nor returns the fragments' fields, and says nothing.
    expect(withoutTypes.answers).toEqual(withTypes.answers);
    expect(bad.details).toEqual({ __typename: 'CinderVolumeDetails' });
    expect(bad.attachments[0].consumer).toEqual({ __typename: 'VolumeServerConsumer' });
    expect(bad).not.toHaveProperty('name');
    // An inline fragment on the member type itself needs no possibleTypes (the typename matches exactly).
    const INLINE = gql`query Inline($id: ID!) { volume(id: $id) { id details { ... on CinderVolumeDetails { cinderStatus } } } }`;
    expect((await withoutTypes.client.query<any>({ query: INLINE, variables: { id } })).data.volume.details).toEqual({
      __typename: 'CinderVolumeDetails',
      cinderStatus: 'IN_USE',
    });
  });

  it('with no X-Auth-Token, the default error policy succeeds: Nomad volumes, and OpenStack named in omittedBackends as NO_CREDENTIAL', async () => {
    const { client } = track(appClient(gw.gateway.url, { 'X-Nomad-Token-east': MGMT }, { possibleTypes }));
    const res = await client.query<any>({ query: LIST });
    expect(res.error).toBeUndefined();
    expect(res.data.volumes.nodes.map((v: any) => v.name)).toEqual(['vol 0', 'vol 1']);
    expect(res.data.volumes.omittedBackends).toEqual([
      {
        __typename: 'VolumeListOmission',
        backend: { __typename: 'StorageBackend', id: 'os' },
        reason: 'NO_CREDENTIAL',
        code: null,
      },
    ]);
  });

  describe('with the Nomad backend down and OpenStack up', () => {
    let down: GatewayUnderTest;
    beforeAll(async () => {
      down = await startGatewayFor([{ id: 'down', url: await closedPortUrl(), readRetries: 0 }, os.backend('os')]);
    });
    const headers = (): Record<string, string> => ({ 'X-Auth-Token': os.demoToken, 'X-Nomad-Token-down': MGMT });

    it('rejects under errorPolicy "none" (the default): the failed backend is an error', async () => {
      const { client } = track(appClient(down.gateway.url, headers(), { possibleTypes }));
      const err = await client.query({ query: LIST }).then(
        () => null,
        (e: unknown) => e,
      );
      expect(CombinedGraphQLErrors.is(err)).toBe(true);
      expect((err as CombinedGraphQLErrors).errors.map((e) => [e.path, e.extensions?.['backend']])).toEqual([
        [['volumes', 'nodes', 0], 'down'],
      ]);
    });

    it('returns the OpenStack volumes and the error under errorPolicy "all"', async () => {
      const { client } = track(appClient(down.gateway.url, headers(), { possibleTypes }));
      const res = await client.query<any>({ query: LIST, errorPolicy: 'all' });
      // A null item stands where Nomad's volumes would be; OpenStack's follow.
      expect(res.data.volumes.nodes.map((v: any) => v?.name ?? null)).toEqual([null, 'alpha', 'beta', 'gamma']);
      expect(res.data.volumes.omittedBackends).toEqual([
        {
          __typename: 'VolumeListOmission',
          backend: { __typename: 'StorageBackend', id: 'down' },
          reason: 'FAILED',
          code: 'BACKEND_UNAVAILABLE',
        },
      ]);
      expect(CombinedGraphQLErrors.is(res.error)).toBe(true);
      expect((res.error as CombinedGraphQLErrors).errors.map((e) => [e.path, e.extensions?.['code']])).toEqual([
        [['volumes', 'nodes', 0], 'BACKEND_UNAVAILABLE'],
      ]);
    });
  });
});
