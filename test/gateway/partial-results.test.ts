/**
 * Partial results of schema v2 (issue 10, items 3 and 6) over HTTP against the simulators: a failed
 * backend is a null item with its error at that item's path and a FAILED omission; a backend the
 * caller sent no credential for is only named in `omittedBackends`; an OpenStack list primes the
 * volume loader; and `Volume.operations` lists what was started on the volume. Every merged field
 * with a caller whose token one backend refuses (issue 27, item 6) is in
 * partial-results-merged-fields.test.ts.
 */
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

const admin = { 'x-nomad-token': MGMT };

/** `service METHOD path` of the OpenStack simulator's log, uuids as `:id`, Keystone and version documents left out. */
const osCalls = (os: OpenStackUnderTest): string[] =>
  (os.sim.requests() as Array<{ service: string; method: string; path: string }>)
    .filter((r) => r.service !== 'keystone' && !/^\/(v3|v2\.1)\/?$/.test(r.path))
    .map(
      (r) =>
        `${r.service} ${r.method} ${r.path.replace(/[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}/g, ':id')}`,
    );

describe('a failed Nomad backend in a merged list', () => {
  let east: NomadSimulator;
  let gw: GatewayUnderTest;

  beforeAll(async () => {
    east = await startNomad();
    seedVolumes(east, 3, 'default', 'e');
    gw = await startGatewayFor([
      { id: 'gone', url: await closedPortUrl(), readRetries: 0 },
      { id: 'east', url: east.url },
    ]);
  });
  afterAll(disposeAll);

  it("should put a null item first in edges and nodes, with the error at each item path, and keep the other backend's volumes", async () => {
    const res = await gw.gql(
      `{ volumes(first: 2) { edges { cursor node { nativeId } } nodes { nativeId } pageInfo { hasNextPage endCursor } omittedBackends { backend { id kind } reason code message } } }`,
      {},
      admin,
    );
    const c = res.body.data.volumes;
    expect(c.nodes).toEqual([null, { nativeId: 'e-000' }, { nativeId: 'e-001' }]);
    expect(c.edges.map((e: any) => e && e.node.nativeId)).toEqual([null, 'e-000', 'e-001']);
    const paths = res.body.errors.map((e: any) => e.path);
    expect(paths).toEqual(
      expect.arrayContaining([
        ['volumes', 'edges', 0],
        ['volumes', 'nodes', 0],
      ]),
    );
    expect(res.body.errors).toHaveLength(2);
    for (const e of res.body.errors)
      expect(e.extensions).toMatchObject({ code: 'BACKEND_UNAVAILABLE', backend: 'gone', retryable: true });
    expect(c.omittedBackends).toEqual([
      {
        backend: { id: 'gone', kind: 'NOMAD' },
        reason: 'FAILED',
        code: 'BACKEND_UNAVAILABLE',
        message: res.body.errors[0].message,
      },
    ]);
    // The next page starts inside east: it does not cover "gone", so names nothing and fails nothing.
    expect(c.pageInfo.hasNextPage).toBe(true);
    const next = await gw.gql(
      `query($a: String) { volumes(first: 2, after: $a) { nodes { nativeId } omittedBackends { reason } } }`,
      { a: c.pageInfo.endCursor },
      admin,
    );
    expect(next.body).toEqual({ data: { volumes: { nodes: [{ nativeId: 'e-002' }], omittedBackends: [] } } });
  });

  it('should do the same for storagePlugins', async () => {
    const res = await gw.gql(
      `{ storagePlugins { nodes { nativeId } omittedBackends { backend { id } reason code } } }`,
      {},
      admin,
    );
    expect(res.body.data.storagePlugins).toEqual({
      nodes: [null, { nativeId: 'aws-ebs0' }, { nativeId: 'hostpath' }],
      omittedBackends: [{ backend: { id: 'gone' }, reason: 'FAILED', code: 'BACKEND_UNAVAILABLE' }],
    });
    expect(res.body.errors).toEqual([
      expect.objectContaining({
        path: ['storagePlugins', 'nodes', 0],
        extensions: expect.objectContaining({ code: 'BACKEND_UNAVAILABLE', backend: 'gone' }),
      }),
    ]);
  });
});

describe('an OpenStack backend the caller sent no X-Auth-Token for', () => {
  let os: OpenStackUnderTest;
  let gw: GatewayUnderTest;

  beforeAll(async () => {
    os = await startOpenStack();
    os.sim.seedVolume({ project: os.demo, name: 'cinder-1', size: 1 });
    const nomad = await startNomad();
    seedVolumes(nomad, 2);
    gw = await startGatewayFor([os.backend('os'), { id: 'east', url: nomad.url }]);
  });
  afterAll(disposeAll);
  beforeEach(() => os.sim.clearRequests());

  const LIST = `{ volumes { nodes { backend { id } name } omittedBackends { backend { id kind requiresCredential } reason code message } } }`;

  it('should name it in omittedBackends as NO_CREDENTIAL, with nothing in errors and no call to OpenStack', async () => {
    const res = await gw.gql(LIST, {}, admin);
    expect(res.body.errors).toBeUndefined();
    expect(res.body.data.volumes.nodes).toEqual([
      { backend: { id: 'east' }, name: 'vol 0' },
      { backend: { id: 'east' }, name: 'vol 1' },
    ]);
    expect(res.body.data.volumes.omittedBackends).toEqual([
      {
        backend: { id: 'os', kind: 'OPENSTACK', requiresCredential: true },
        reason: 'NO_CREDENTIAL',
        code: null,
        message: expect.stringContaining('X-Auth-Token'),
      },
    ]);
    expect(os.sim.requests()).toEqual([]);
  });

  it('should list it, and omit nothing, once the token comes', async () => {
    const res = await gw.gql(LIST, {}, { ...admin, 'x-auth-token': os.demoToken });
    expect(res.body.errors).toBeUndefined();
    expect(res.body.data.volumes.nodes.map((v: any) => `${v.backend.id}:${v.name}`)).toEqual([
      'os:cinder-1',
      'east:vol 0',
      'east:vol 1',
    ]);
    expect(res.body.data.volumes.omittedBackends).toEqual([]);
  });
});

describe('an OpenStack list primes the volume loader', () => {
  let os: OpenStackUnderTest;
  let gw: GatewayUnderTest;
  let auth: Record<string, string>;

  beforeAll(async () => {
    os = await startOpenStack();
    // Ten attached volumes: enough that a cold batch of reads would be a second list-detail, not shows.
    for (let i = 0; i < 10; i++) {
      const v = os.sim.seedVolume({ project: os.demo, name: `data-${i}`, size: 1 });
      os.sim.attachNow(os.sim.seedServer({ project: os.demo, name: `web-${i}` }), v, {});
    }
    gw = await startGatewayFor([os.backend('os')]);
    auth = { 'x-auth-token': os.demoToken };
  });
  afterAll(disposeAll);

  it("should read no volume again for attachments, details and each attachment's volume: one Cinder list-detail in all", async () => {
    os.sim.clearRequests();
    const res = await gw.gql(
      `{ volumes(first: 50) { nodes { id name sizeBytes attachments { id state volume { id name status } } details { __typename ... on CinderVolumeDetails { cinderStatus sizeGiB bootable } } } } }`,
      {},
      auth,
    );
    expect(res.body.errors).toBeUndefined();
    const nodes = res.body.data.volumes.nodes;
    expect(nodes).toHaveLength(10);
    for (const v of nodes) {
      expect(v).toMatchObject({
        sizeBytes: 2 ** 30,
        details: { __typename: 'CinderVolumeDetails', cinderStatus: 'IN_USE', sizeGiB: 1, bootable: false },
      });
      expect(v.attachments).toEqual([
        { id: expect.any(String), state: 'ATTACHED', volume: { id: v.id, name: v.name, status: 'IN_USE' } },
      ]);
    }
    const cinder = osCalls(os).filter((c) => c.startsWith('cinder '));
    expect(cinder).toEqual(['cinder GET /v3/:id/volumes/detail']);
  });
});

describe('Volume.operations', () => {
  let os: OpenStackUnderTest;
  let gw: GatewayUnderTest;
  let auth: Record<string, string>;
  const idOf = async (nativeId: string): Promise<string> =>
    (
      await gw.gql(
        `query($n: String!, $p: String) { volumeByNativeId(backend: "os", namespace: $p, nativeId: $n) { id } }`,
        { n: nativeId, p: os.demo },
        auth,
      )
    ).body.data.volumeByNativeId.id;

  beforeAll(async () => {
    os = await startOpenStack({ delays: { extendMs: 20 } });
    gw = await startGatewayFor([os.backend('os')], { operationOptions: { pollMs: 20, maxPollMs: 50 } });
    auth = { 'x-auth-token': os.demoToken };
  });
  afterAll(disposeAll);

  it('should list the operations started on the volume, newest first, and none on another volume', async () => {
    const id = await idOf(os.sim.seedVolume({ project: os.demo, name: 'grow-me', size: 1 }));
    const untouched = await idOf(os.sim.seedVolume({ project: os.demo, name: 'leave-me', size: 1 }));
    const renamed = await gw.gql(
      `mutation($id: ID!) { updateVolume(input: { volumeId: $id, name: "grown" }) { operation { id kind state } } }`,
      { id },
      auth,
    );
    expect(renamed.body.errors).toBeUndefined();
    const update = renamed.body.data.updateVolume.operation;
    expect(update).toMatchObject({ kind: 'UPDATE_VOLUME', state: 'SUCCEEDED' });
    const extended = await gw.gql(
      `mutation($id: ID!) { extendVolume(input: { volumeId: $id, newSizeGiB: 2 }) { operation { id kind } } }`,
      { id },
      auth,
    );
    expect(extended.body.errors).toBeUndefined();
    const extend = extended.body.data.extendVolume.operation;
    expect(extend.kind).toBe('EXTEND_VOLUME');

    const q = `query($a: ID!, $b: ID!) {
      a: volume(id: $a) { name operations { id kind targetId target { ... on Volume { id name } } backend { id } } }
      b: volume(id: $b) { operations { id } } }`;
    const res = await gw.gql(q, { a: id, b: untouched }, auth);
    expect(res.body.errors).toBeUndefined();
    expect(res.body.data.a.name).toBe('grown');
    expect(res.body.data.a.operations).toEqual([
      { id: extend.id, kind: 'EXTEND_VOLUME', targetId: id, target: { id, name: 'grown' }, backend: { id: 'os' } },
      { id: update.id, kind: 'UPDATE_VOLUME', targetId: id, target: { id, name: 'grown' }, backend: { id: 'os' } },
    ]);
    expect(res.body.data.b.operations).toEqual([]);
  });
});
