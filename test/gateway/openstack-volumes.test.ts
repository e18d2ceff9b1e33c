/**
 * OpenStack through the gateway: Keystone tokens passed through, Cinder volumes in the unified
 * model next to Nomad's, project isolation, batching of server lookups, errors and bad input.
 * The gateway talks HTTP to the OpenStack simulator; assertions read its request log.
 */
import { disposeAll, seedVolumes, startGatewayFor, startNomad, startOpenStack, type GatewayUnderTest, type OpenStackUnderTest } from '../support/harness';

const LIST = `query($f: VolumeFilter, $first: Int, $after: String) { volumes(first: $first, after: $after, filter: $f) {
  nodes { id backend { id } namespace nativeId name status backendStatus sizeGiB capacityBytes volumeType availabilityZone bootable multiattach
    metadata { key value } topologies { segments { key value } }
    attachments { id state device nativeId consumer { __typename ... on OpenStackServer { id name status } ... on NomadAllocation { id } } } }
  pageInfo { hasNextPage endCursor } } }`;

describe('OpenStack volumes through the gateway', () => {
  let os: OpenStackUnderTest;
  let gw: GatewayUnderTest;
  let auth: Record<string, string>;
  const vols: string[] = [];
  const servers: string[] = [];

  beforeAll(async () => {
    os = await startOpenStack();
    for (let i = 0; i < 12; i++) vols.push(os.sim.seedVolume({ project: os.demo, name: `data-${i}`, size: 1 + (i % 3), metadata: { team: i % 2 ? 'a' : 'b' } }));
    vols.push(os.sim.seedVolume({ project: os.demo, name: 'boot', size: 10, bootable: true }));
    os.sim.seedVolume({ project: os.other, name: 'secret-of-other', size: 1 });
    for (let i = 0; i < 10; i++) servers.push(os.sim.seedServer({ project: os.demo, name: `web-${i}` }));
    // Ten attached volumes on ten servers: lists need their server names.
    for (let i = 0; i < 10; i++) os.sim.attachNow(servers[i]!, vols[i]!, { device: `/dev/vd${String.fromCharCode(98 + i)}` });
    gw = await startGatewayFor([os.backend('os')]);
    auth = { 'x-auth-token': os.demoToken };
  });
  afterAll(disposeAll);

  it('should list the caller project volumes in the unified model, with server names batched into one Nova call', async () => {
    os.sim.clearRequests();
    const res = await gw.gql(LIST, { first: 50 }, auth);
    expect(res.body.errors).toBeUndefined();
    const nodes = res.body.data.volumes.nodes;
    expect(nodes).toHaveLength(13);
    expect(nodes.map((v: any) => v.name)).not.toContain('secret-of-other');
    const boot = nodes.find((v: any) => v.name === 'boot');
    expect(boot).toMatchObject({ backend: { id: 'os' }, namespace: os.demo, status: 'AVAILABLE', backendStatus: 'available', sizeGiB: 10, capacityBytes: 10 * 2 ** 30, bootable: true, multiattach: false, attachments: [] });
    const attached = nodes.filter((v: any) => v.attachments.length > 0);
    expect(attached).toHaveLength(10);
    for (const v of attached) {
      expect(v).toMatchObject({ status: 'IN_USE', backendStatus: 'in-use' });
      expect(v.attachments[0]).toMatchObject({ state: 'ATTACHED', consumer: { __typename: 'OpenStackServer', status: 'ACTIVE' } });
      expect(v.attachments[0].consumer.name).toMatch(/^web-\d$/);
      expect(v.attachments[0].device).toMatch(/^\/dev\/vd[b-k]$/);
    }
    // One token validation, one version document per service, one list, one server list (10 servers ≥ 8: list beats shows).
    const calls = os.sim.requests().map((r: any) => `${r.service} ${r.method} ${r.path.replace(/[0-9a-f-]{32,36}/g, ':id')}`);
    expect(calls.filter((c: string) => c.startsWith('cinder GET') && c.includes('/volumes/detail'))).toHaveLength(1);
    expect(calls.filter((c: string) => c.startsWith('nova GET /v2.1/servers/detail'))).toHaveLength(1);
    expect(calls.filter((c: string) => /nova GET \/v2\.1\/servers\/:id$/.test(c))).toHaveLength(0);
    expect(calls.filter((c: string) => c.includes('/volumes/:id'))).toHaveLength(0);
  });

  it('should show servers one by one below the batch threshold', async () => {
    os.sim.clearRequests();
    const res = await gw.gql(LIST, { first: 2 }, auth);
    expect(res.body.errors).toBeUndefined();
    const shows = os.sim.requests().filter((r: any) => r.service === 'nova' && /^\/v2\.1\/servers\/[0-9a-f-]{36}$/.test(r.path));
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
    const detail = os.sim.requests().filter((r: any) => r.path.endsWith('/volumes/detail')).at(-1) as any;
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

  it('should answer UNAUTHENTICATED naming the backend for no token or a bad one, and validate a token once per minute', async () => {
    const none = await gw.gql(LIST, {}, {});
    expect(none.body.errors[0].extensions).toMatchObject({ code: 'UNAUTHENTICATED', backend: 'os' });
    const bad = await gw.gql(LIST, {}, { 'x-auth-token': 'gAAAAAnot-a-token' });
    expect(bad.body.errors[0].extensions).toMatchObject({ code: 'UNAUTHENTICATED', backend: 'os' });
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

  it('should list servers, their Nova volume attachments and those volumes in a bounded number of calls', async () => {
    os.sim.clearRequests();
    const res = await gw.gql(`query { servers(backend: "os", first: 20) { nodes { id name status volumeAttachments { volumeId device attachmentId volume { name status } } } } }`, {}, auth);
    expect(res.body.errors).toBeUndefined();
    const web0 = res.body.data.servers.nodes.find((s: any) => s.name === 'web-0');
    expect(web0.volumeAttachments).toEqual([expect.objectContaining({ device: '/dev/vdb', volume: { name: 'data-0', status: 'IN_USE' } })]);
    // One server list, one attachment list per server (Nova has no cross-server listing), and the
    // ten volumes in one batched Cinder list-detail (>= the batch threshold): 1 + 10 + 1.
    const calls = os.sim.requests().filter((r) => r.service !== 'keystone' && !/^\/(v3|v2\.1)\/?$/.test(r.path)).map((r) => `${r.method} ${r.path.replace(/[0-9a-f-]{32,36}/g, ':id')}`);
    expect(calls.filter((c) => c === 'GET /v2.1/servers/detail')).toHaveLength(1);
    expect(calls.filter((c) => c === 'GET /v2.1/servers/:id/os-volume_attachments')).toHaveLength(10);
    expect(calls.filter((c) => c.startsWith('GET /v3/:id/volumes'))).toEqual(['GET /v3/:id/volumes/detail']);
    expect(calls).toHaveLength(12);
  });

  it('should show one server volume attachment (Nova show), and null when there is none', async () => {
    const q = `query($s: ID!, $v: ID!) { serverVolumeAttachment(backend: "os", serverId: $s, volumeId: $v) { volumeId device server { name } volume { name } } }`;
    const res = await gw.gql(q, { s: servers[3], v: vols[3] }, auth);
    expect(res.body).toEqual({ data: { serverVolumeAttachment: { volumeId: vols[3], device: '/dev/vde', server: { name: 'web-3' }, volume: { name: 'data-3' } } } });
    expect(os.sim.requests().some((r) => r.method === 'GET' && r.path.endsWith(`/os-volume_attachments/${vols[3]}`))).toBe(true);
    const none = await gw.gql(q, { s: servers[3], v: vols[4] }, auth);
    expect(none.body).toEqual({ data: { serverVolumeAttachment: null } });
    const bad = await gw.gql(q, { s: '../x', v: vols[4] }, auth);
    expect(bad.body.errors[0].extensions.code).toBe('BAD_USER_INPUT');
  });
});

describe('OpenStack beside Nomad', () => {
  afterAll(disposeAll);

  it('should merge both kinds in one list, and return Nomad data with an error naming OpenStack when its token is missing', async () => {
    const os = await startOpenStack();
    os.sim.seedVolume({ project: os.demo, name: 'cinder-1', size: 1 });
    const nomad = await startNomad({ acl: { enabled: false } });
    seedVolumes(nomad, 2);
    const gw = await startGatewayFor([{ id: 'east', url: nomad.url }, os.backend('os')]);
    const both = await gw.gql(`{ volumes { nodes { backend { id kind } name } } backends { id kind capabilities } }`, {}, { 'x-auth-token': os.demoToken });
    expect(both.body.errors).toBeUndefined();
    expect(both.body.data.volumes.nodes.map((v: any) => `${v.backend.id}:${v.name}`)).toEqual(['east:vol 0', 'east:vol 1', 'os:cinder-1']);
    expect(both.body.data.backends.find((b: any) => b.id === 'os').capabilities).toEqual(expect.arrayContaining(['ATTACH_VOLUME', 'EXTEND_VOLUME', 'HOST_ATTACHMENTS', 'TRACKED_OPERATIONS']));
    const nomadOnly = await gw.gql(`{ volumes { nodes { name } } }`);
    expect(nomadOnly.body.data.volumes.nodes.map((v: any) => v.name)).toEqual(['vol 0', 'vol 1']);
    expect(nomadOnly.body.errors).toEqual([expect.objectContaining({ path: ['volumes'], extensions: expect.objectContaining({ code: 'UNAUTHENTICATED', backend: 'os' }) })]);
  });
});
