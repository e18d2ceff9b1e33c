/**
 * OpenStack through the gateway: Keystone tokens passed through, Cinder volumes in the unified
 * model next to Nomad's, project isolation, batching of server lookups, errors and bad input.
 * The gateway talks HTTP to the OpenStack simulator; assertions read its request log.
 */
import {
  disposeAll,
  seedVolumes,
  startGatewayFor,
  startNomad,
  startOpenStack,
  type GatewayUnderTest,
  type OpenStackUnderTest,
} from '../support/harness';

const LIST = `query($f: VolumeFilter, $first: Int, $after: String) { volumes(first: $first, after: $after, filter: $f) {
  nodes { id backend { id } namespace nativeId name status backendStatus sizeBytes
    details { __typename ... on CinderVolumeDetails { sizeGiB volumeType availabilityZone bootable multiattach metadata { key value } } }
    attachments { id state device nativeId consumer { __typename ... on VolumeServerConsumer { serverId name status } ... on VolumeAllocationConsumer { allocationId } } } }
  pageInfo { hasNextPage endCursor }
  omittedBackends { backend { id } reason code message } } }`;

describe('OpenStack volumes through the gateway', () => {
  let os: OpenStackUnderTest;
  let gw: GatewayUnderTest;
  let auth: Record<string, string>;
  const vols: string[] = [];
  const servers: string[] = [];

  beforeAll(async () => {
    os = await startOpenStack();
    for (let i = 0; i < 12; i++)
      vols.push(
        os.sim.seedVolume({
          project: os.demo,
          name: `data-${i}`,
          size: 1 + (i % 3),
          metadata: { team: i % 2 ? 'a' : 'b' },
        }),
      );
    vols.push(os.sim.seedVolume({ project: os.demo, name: 'boot', size: 10, bootable: true }));
    os.sim.seedVolume({ project: os.other, name: 'secret-of-other', size: 1 });
    for (let i = 0; i < 10; i++) servers.push(os.sim.seedServer({ project: os.demo, name: `web-${i}` }));
    // Ten attached volumes on ten servers: lists need their server names.
    for (let i = 0; i < 10; i++)
      os.sim.attachNow(servers[i]!, vols[i]!, { device: `/dev/vd${String.fromCharCode(98 + i)}` });
    gw = await startGatewayFor([os.backend('os')]);
    auth = { 'x-auth-token': os.demoToken };
  });
  afterAll(disposeAll);

  it("should name the caller's project (the Keystone token's), and give none without a token", async () => {
    const q = '{ storageBackends { id callerNamespace { id name } } }';
    expect((await gw.gql(q, {}, auth)).body).toEqual({
      data: { storageBackends: [{ id: 'os', callerNamespace: { id: os.demo, name: 'demo' } }] },
    });
    expect((await gw.gql(q, {}, { 'x-auth-token': os.otherToken })).body).toEqual({
      data: { storageBackends: [{ id: 'os', callerNamespace: { id: os.other, name: 'other' } }] },
    });
    expect((await gw.gql(q, {})).body).toEqual({ data: { storageBackends: [{ id: 'os', callerNamespace: null }] } });
  });

  it('should list the caller project volumes in the unified model, with server names batched into one Nova call', async () => {
    os.sim.clearRequests();
    const res = await gw.gql(LIST, { first: 50 }, auth);
    expect(res.body.errors).toBeUndefined();
    const nodes = res.body.data.volumes.nodes;
    expect(nodes).toHaveLength(13);
    expect(nodes.map((v: any) => v.name)).not.toContain('secret-of-other');
    const boot = nodes.find((v: any) => v.name === 'boot');
    expect(boot).toMatchObject({
      backend: { id: 'os' },
      namespace: os.demo,
      status: 'AVAILABLE',
      backendStatus: 'available',
      sizeBytes: 10 * 2 ** 30,
      attachments: [],
      details: { __typename: 'CinderVolumeDetails', sizeGiB: 10, bootable: true, multiattach: false },
    });
    expect(res.body.data.volumes.omittedBackends).toEqual([]);
    const attached = nodes.filter((v: any) => v.attachments.length > 0);
    expect(attached).toHaveLength(10);
    for (const v of attached) {
      expect(v).toMatchObject({ status: 'IN_USE', backendStatus: 'in-use' });
      expect(v.attachments[0]).toMatchObject({
        state: 'ATTACHED',
        consumer: { __typename: 'VolumeServerConsumer', serverId: expect.any(String), status: 'ACTIVE' },
      });
      expect(v.attachments[0].consumer.name).toMatch(/^web-\d$/);
      expect(v.attachments[0].device).toMatch(/^\/dev\/vd[b-k]$/);
    }
    // One token validation, one version document per service, one list, one server list (10 servers ≥ 8: list beats shows).
    const calls = os.sim
      .requests()
      .map((r: any) => `${r.service} ${r.method} ${r.path.replace(/[0-9a-f-]{32,36}/g, ':id')}`);
    expect(calls.filter((c: string) => c.startsWith('cinder GET') && c.includes('/volumes/detail'))).toHaveLength(1);
    expect(calls.filter((c: string) => c.startsWith('nova GET /v2.1/servers/detail'))).toHaveLength(1);
    expect(calls.filter((c: string) => /nova GET \/v2\.1\/servers\/:id$/.test(c))).toHaveLength(0);
    expect(calls.filter((c: string) => c.includes('/volumes/:id'))).toHaveLength(0);
  });

  it('should show servers one by one below the batch threshold', async () => {
    os.sim.clearRequests();
    const res = await gw.gql(LIST, { first: 2 }, auth);
    expect(res.body.errors).toBeUndefined();
    const shows = os.sim
      .requests()
      .filter((r: any) => r.service === 'nova' && /^\/v2\.1\/servers\/[0-9a-f-]{36}$/.test(r.path));
    const withServer = res.body.data.volumes.nodes.filter((v: any) => v.attachments.length > 0).length;
    expect(shows).toHaveLength(withServer);
  });

  it('should page with after and keep hasNextPage exact', async () => {
    const seen: string[] = [];
    let after: string | null = null;
    for (let page = 0; page < 10; page++) {
      const res: any = await gw.gql(LIST, { first: 5, after }, auth);
      expect(res.body.errors).toBeUndefined();
      seen.push(...res.body.data.volumes.nodes.map((v: any) => v.nativeId));
      if (!res.body.data.volumes.pageInfo.hasNextPage) break;
      after = res.body.data.volumes.pageInfo.endCursor;
    }
    expect(seen).toHaveLength(13);
    expect(new Set(seen).size).toBe(13);
  });

  it('should filter by name on Cinder and by status in the gateway', async () => {
    const byName = await gw.gql(LIST, { f: { name: 'boot' } }, auth);
    expect(byName.body.data.volumes.nodes.map((v: any) => v.name)).toEqual(['boot']);
    const detail = os.sim
      .requests()
      .filter((r: any) => r.path.endsWith('/volumes/detail'))
      .at(-1) as any;
    expect(detail.query).toMatch(/name=boot/);
    const available = await gw.gql(LIST, { f: { status: ['AVAILABLE'] } }, auth);
    expect(available.body.data.volumes.nodes).toHaveLength(3);
  });

  it('should keep projects apart: another project token neither lists nor reads demo volumes', async () => {
    const other = { 'x-auth-token': os.otherToken };
    const list = await gw.gql(LIST, {}, other);
    expect(list.body.data.volumes.nodes.map((v: any) => v.name)).toEqual(['secret-of-other']);
    const id = (await gw.gql(LIST, { f: { name: 'boot' } }, auth)).body.data.volumes.nodes[0].id;
    const read = await gw.gql(`query($id: ID!) { volume(id: $id) { name } }`, { id }, other);
    expect(read.body.errors).toBeUndefined();
    expect(read.body.data.volume).toBeNull();
  });

  it('should leave OpenStack out as NO_CREDENTIAL without a token, answer UNAUTHENTICATED naming the backend for a bad token or a tokenless read, and validate a token once per minute', async () => {
    // No token: not an error, the list names the backend it left out and why.
    const none = await gw.gql(LIST, {}, {});
    expect(none.body.errors).toBeUndefined();
    expect(none.body.data.volumes.nodes).toEqual([]);
    expect(none.body.data.volumes.omittedBackends).toEqual([
      { backend: { id: 'os' }, reason: 'NO_CREDENTIAL', code: null, message: expect.stringMatching(/X-Auth-Token/) },
    ]);
    const id = (await gw.gql(LIST, { f: { name: 'boot' } }, auth)).body.data.volumes.nodes[0].id;
    const read = await gw.gql(`query($id: ID!) { volume(id: $id) { name } }`, { id }, {});
    expect(read.body.data.volume).toBeNull();
    expect(read.body.errors[0].extensions).toMatchObject({ code: 'UNAUTHENTICATED', backend: 'os' });
    // A bad token is a failure: a null item where the backend's volumes would be, the error at its path.
    const bad = await gw.gql(LIST, {}, { 'x-auth-token': 'gAAAAAnot-a-token' });
    expect(bad.body.data.volumes.nodes).toEqual([null]);
    expect(bad.body.errors).toEqual([
      expect.objectContaining({
        path: ['volumes', 'nodes', 0],
        extensions: expect.objectContaining({ code: 'UNAUTHENTICATED', backend: 'os' }),
      }),
    ]);
    expect(bad.body.data.volumes.omittedBackends).toEqual([
      expect.objectContaining({ backend: { id: 'os' }, reason: 'FAILED', code: 'UNAUTHENTICATED' }),
    ]);
    os.sim.clearRequests();
    await gw.gql(LIST, { first: 1 }, auth);
    await gw.gql(LIST, { first: 1 }, auth);
    expect(os.sim.requests().filter((r: any) => r.service === 'keystone')).toHaveLength(0);
  });

  it('should send the negotiated microversions and read the version documents once', async () => {
    const reqs = os.sim.requests() as any[];
    const cinder = reqs.find((r) => r.service === 'cinder' && r.path.endsWith('/volumes/detail'));
    const nova = reqs.find((r) => r.service === 'nova' && r.path.includes('/servers'));
    expect(cinder.microversion).toMatch(/^volume 3\.\d+$/);
    expect(nova.microversion).toMatch(/^compute 2\.\d+$/);
  });

  it('should resolve servers as entities with their Nova volume attachments and those volumes in a bounded number of calls', async () => {
    os.sim.clearRequests();
    const reps = servers.map((id) => ({ __typename: 'Server', id }));
    const res = await gw.gql(
      `query($reps: [_Any!]!) { _entities(representations: $reps) { ... on Server { id volumeAttachments { id state device volume { name status } consumer { ... on VolumeServerConsumer { serverId } } } } } }`,
      { reps },
      auth,
    );
    expect(res.body.errors).toBeUndefined();
    const web0 = res.body.data._entities[0];
    expect(web0).toEqual({
      id: servers[0],
      volumeAttachments: [
        expect.objectContaining({
          state: 'ATTACHED',
          device: '/dev/vdb',
          volume: { name: 'data-0', status: 'IN_USE' },
          consumer: { serverId: servers[0] },
        }),
      ],
    });
    expect(res.body.data._entities.every((s: any) => s.volumeAttachments.length === 1)).toBe(true);
    // One attachment list per server (Nova has no cross-server listing), and the ten volumes in
    // one batched Cinder list-detail (>= the batch threshold): the read that checks Nova's list
    // against Cinder also serves `volume { … }` (lists prime the volume loader), so 10 + 1.
    const calls = os.sim
      .requests()
      .filter((r) => r.service !== 'keystone' && !/^\/(v3|v2\.1)\/?$/.test(r.path))
      .map((r) => `${r.method} ${r.path.replace(/[0-9a-f-]{32,36}/g, ':id')}`);
    expect(calls.filter((c) => c === 'GET /v2.1/servers/:id/os-volume_attachments')).toHaveLength(10);
    expect(calls.filter((c) => c.startsWith('GET /v3/:id/volumes'))).toEqual(['GET /v3/:id/volumes/detail']);
    expect(calls).toHaveLength(11);
  });

  it("should list one server's volume attachments at the root and read one back by id, and refuse a bad server id", async () => {
    const q = `query($s: ID!) { serverVolumeAttachments(serverId: $s) { id device nativeId volume { nativeId name } consumer { ... on VolumeServerConsumer { serverId name } } } }`;
    const res = await gw.gql(q, { s: servers[3] }, auth);
    expect(res.body.errors).toBeUndefined();
    const [a] = res.body.data.serverVolumeAttachments;
    expect(res.body.data.serverVolumeAttachments).toEqual([
      {
        id: expect.any(String),
        device: '/dev/vde',
        nativeId: expect.any(String),
        volume: { nativeId: vols[3], name: 'data-3' },
        consumer: { serverId: servers[3], name: 'web-3' },
      },
    ]);
    expect(
      os.sim
        .requests()
        .some((r) => r.method === 'GET' && r.path === `/v2.1/servers/${servers[3]}/os-volume_attachments`),
    ).toBe(true);
    const one = await gw.gql(
      `query($id: ID!) { volumeAttachment(id: $id) { id device volume { name } } }`,
      { id: a.id },
      auth,
    );
    expect(one.body).toEqual({
      data: { volumeAttachment: { id: a.id, device: '/dev/vde', volume: { name: 'data-3' } } },
    });
    // A server with no volumes has an empty list, not null.
    const bare = os.sim.seedServer({ project: os.demo, name: 'bare' });
    expect((await gw.gql(q, { s: bare }, auth)).body).toEqual({ data: { serverVolumeAttachments: [] } });
    const bad = await gw.gql(q, { s: '../x' }, auth);
    expect(bad.body.errors[0].extensions.code).toBe('BAD_USER_INPUT');
  });
});

describe('OpenStack beside Nomad', () => {
  afterAll(disposeAll);

  it('should merge both kinds in one list, and return Nomad data naming OpenStack as left out (not an error) when its token is missing', async () => {
    const os = await startOpenStack();
    os.sim.seedVolume({ project: os.demo, name: 'cinder-1', size: 1 });
    const nomad = await startNomad({ acl: { enabled: false } });
    seedVolumes(nomad, 2);
    const gw = await startGatewayFor([{ id: 'east', url: nomad.url }, os.backend('os')]);
    const both = await gw.gql(
      `{ volumes { nodes { id backend { id kind } name } omittedBackends { reason } } storageBackends { id kind capabilities requiresCredential } }`,
      {},
      { 'x-auth-token': os.demoToken },
    );
    expect(both.body.errors).toBeUndefined();
    expect(both.body.data.volumes.nodes.map((v: any) => `${v.backend.id}:${v.name}`)).toEqual([
      'east:vol 0',
      'east:vol 1',
      'os:cinder-1',
    ]);
    expect(both.body.data.volumes.omittedBackends).toEqual([]);
    const osBackend = both.body.data.storageBackends.find((b: any) => b.id === 'os');
    expect(osBackend.capabilities).toEqual(
      expect.arrayContaining([
        'ATTACH_VOLUME',
        'EXTEND_VOLUME',
        'HOST_ATTACHMENTS',
        'SERVER_ATTACHMENTS',
        'VOLUME_ACTIONS',
        'TRACKED_OPERATIONS',
      ]),
    );
    expect(osBackend.requiresCredential).toBe(true);
    const nomadOnly = await gw.gql(`{ volumes { nodes { id name } omittedBackends { backend { id } reason code } } }`);
    expect(nomadOnly.body.errors).toBeUndefined();
    expect(nomadOnly.body.data.volumes.nodes.map((v: any) => v.name)).toEqual(['vol 0', 'vol 1']);
    expect(nomadOnly.body.data.volumes.omittedBackends).toEqual([
      { backend: { id: 'os' }, reason: 'NO_CREDENTIAL', code: null },
    ]);
  });
});
