import type { NomadSimulator } from '../../simulators/nomad';
import {
  MGMT,
  closedPortUrl,
  disposeAll,
  seedVolumes,
  startGatewayFor,
  startNomad,
  type GatewayUnderTest,
} from '../support/harness';

const admin = { 'x-nomad-token': MGMT };
const PAGE = `query($first: Int, $after: String, $filter: VolumeFilter) {
  volumes(first: $first, after: $after, filter: $filter) {
    edges { cursor node { backend { id } namespace nativeId status } }
    pageInfo { hasNextPage endCursor }
    omittedBackends { backend { id } }
  }
}`;

async function walk(gw: GatewayUnderTest, first: number, filter?: unknown): Promise<{ ids: string[]; pages: number }> {
  const ids: string[] = [];
  let after: string | null = null;
  let pages = 0;
  for (;;) {
    const res = await gw.gql(PAGE, { first, after, filter }, admin);
    expect(res.body.errors).toBeUndefined();
    const c = res.body.data.volumes;
    expect(c.omittedBackends).toEqual([]);
    pages++;
    for (const e of c.edges) ids.push(`${e.node.backend.id}/${e.node.namespace}/${e.node.nativeId}`);
    if (!c.pageInfo.hasNextPage) break;
    expect(c.edges.length).toBeGreaterThan(0);
    after = c.pageInfo.endCursor;
  }
  return { ids, pages };
}

describe('volume listing across two Nomad clusters', () => {
  let east: NomadSimulator;
  let west: NomadSimulator;
  let gw: GatewayUnderTest;

  beforeEach(async () => {
    east = await startNomad();
    west = await startNomad();
    seedVolumes(east, 4, 'default', 'e');
    seedVolumes(east, 2, 'analytics', 'ea');
    seedVolumes(west, 3, 'default', 'w');
    gw = await startGatewayFor([
      { id: 'east', url: east.url },
      { id: 'west', url: west.url },
    ]);
  });
  afterEach(disposeAll);

  const everything = [
    'east/analytics/ea-000',
    'east/analytics/ea-001',
    'east/default/e-000',
    'east/default/e-001',
    'east/default/e-002',
    'east/default/e-003',
    'west/default/w-000',
    'west/default/w-001',
    'west/default/w-002',
  ];

  it.each([1, 2, 3, 4, 9, 50])(
    'should page through a merged, stable order with first=%i and no duplicates or gaps',
    async (first) => {
      const { ids, pages } = await walk(gw, first);
      expect(ids).toEqual(everything);
      expect(pages).toBe(Math.max(1, Math.ceil(everything.length / first)));
    },
  );

  it('should resume from any edge cursor exactly after that edge', async () => {
    const res = await gw.gql(PAGE, { first: 9 }, admin);
    const edges = res.body.data.volumes.edges;
    for (let i = 0; i < edges.length; i++) {
      const next = await gw.gql(PAGE, { first: 1, after: edges[i].cursor }, admin);
      const got = next.body.data.volumes.edges.map((e: any) => e.node.nativeId);
      expect(got).toEqual(i + 1 < edges.length ? [edges[i + 1].node.nativeId] : []);
    }
  });

  it('should use Nomad pagination (per_page, next_token) rather than reading everything', async () => {
    await gw.gql(PAGE, { first: 2 }, admin);
    const q = east
      .requests()
      .filter((r) => r.path === '/v1/volumes')
      .map((r) => r.query);
    expect(q).toEqual([expect.objectContaining({ type: ['csi'], namespace: ['*'], per_page: ['3'] })]);
    expect(west.requests()).toEqual([]);
  });

  it('should filter by backend, namespace, name, plugin and status', async () => {
    expect((await walk(gw, 50, { backends: ['west'] })).ids).toEqual(everything.slice(6));
    expect((await walk(gw, 50, { namespace: 'analytics' })).ids).toEqual([
      'east/analytics/ea-000',
      'east/analytics/ea-001',
    ]);
    expect((await walk(gw, 50, { name: 'e 2' })).ids).toEqual(['east/default/e-002']);
    expect((await walk(gw, 2, { plugin: 'aws-ebs0' })).ids).toEqual(everything);
    expect((await walk(gw, 50, { plugin: 'hostpath' })).ids).toEqual([]);
    east.placeAllocation({
      jobId: 'j',
      nodeId: 'node-1111',
      volumes: [{ volumeId: 'e-001', mode: 'write', accessMode: 'single-node-writer', attachmentMode: 'file-system' }],
    });
    expect((await walk(gw, 1, { status: ['IN_USE'] })).ids).toEqual(['east/default/e-001']);
    expect((await walk(gw, 50, { status: ['AVAILABLE'] })).ids).toHaveLength(8);
  });

  it('should send plugin as a filter expression across namespaces, since plugin_id with namespace=* answers [] on Nomad', async () => {
    east.clearRequests();
    await gw.gql(PAGE, { first: 5, filter: { backends: ['east'], plugin: 'aws-ebs0' } }, admin);
    const [q] = east
      .requests()
      .filter((r) => r.path === '/v1/volumes')
      .map((r) => r.query);
    expect(q!.plugin_id).toBeUndefined();
    expect(q!.filter).toEqual(['PluginID == `aws-ebs0`']);
    east.clearRequests();
    await gw.gql(PAGE, { first: 5, filter: { backends: ['east'], plugin: 'aws-ebs0', namespace: 'default' } }, admin);
    const [q2] = east
      .requests()
      .filter((r) => r.path === '/v1/volumes')
      .map((r) => r.query);
    expect(q2!.plugin_id).toEqual(['aws-ebs0']);
  });

  it('should list volumes used on a node through node_id, paged by the gateway', async () => {
    east.placeAllocation({
      jobId: 'j1',
      nodeId: 'node-2222',
      volumes: [
        { volumeId: 'e-003', mode: 'read', accessMode: 'single-node-reader-only', attachmentMode: 'file-system' },
      ],
    });
    east.placeAllocation({
      jobId: 'j2',
      nodeId: 'node-2222',
      volumes: [{ volumeId: 'e-000', mode: 'write', accessMode: 'single-node-writer', attachmentMode: 'file-system' }],
    });
    east.placeAllocation({
      jobId: 'j3',
      nodeId: 'node-1111',
      volumes: [{ volumeId: 'e-001', mode: 'write', accessMode: 'single-node-writer', attachmentMode: 'file-system' }],
    });
    expect((await walk(gw, 1, { node: 'node-2222' })).ids).toEqual(['east/default/e-000', 'east/default/e-003']);
  });

  it("should return the other backends' volumes, a null item where the backend that is down would be, and its error at that item's path", async () => {
    const down = await closedPortUrl();
    const gw2 = await startGatewayFor([
      { id: 'east', url: east.url },
      { id: 'gone', url: down, readRetries: 0 },
      { id: 'west', url: west.url },
    ]);
    const res = await gw2.gql(
      `{ volumes(first: 50) { nodes { backend { id } nativeId } omittedBackends { backend { id } reason code message } } }`,
      {},
      admin,
    );
    const nodes = res.body.data.volumes.nodes;
    // east's 6 volumes, the null standing for "gone", then west's 3.
    expect(nodes).toHaveLength(10);
    expect(nodes[6]).toBeNull();
    expect(nodes.filter((n: unknown) => n !== null).map((n: any) => `${n.backend.id}/${n.nativeId}`)).toEqual(
      everything.map((id) => id.replace(/\/(default|analytics)\//, '/')),
    );
    expect(res.body.errors).toEqual([
      expect.objectContaining({
        path: ['volumes', 'nodes', 6],
        extensions: expect.objectContaining({ code: 'BACKEND_UNAVAILABLE', backend: 'gone', retryable: true }),
      }),
    ]);
    expect(res.body.errors[0].message).toContain('"gone"');
    expect(res.body.data.volumes.omittedBackends).toEqual([
      { backend: { id: 'gone' }, reason: 'FAILED', code: 'BACKEND_UNAVAILABLE', message: res.body.errors[0].message },
    ]);
  });
});
