/**
 * Identifier rules over HTTP (issue 9, item 3): dot segments, lone surrogates, `*` scopes and
 * characters a backend cannot have in that position are BAD_USER_INPUT naming the argument, and
 * no simulator sees a request.
 */
import type { NomadSimulator } from '../../simulators/nomad';
import {
  MGMT,
  disposeAll,
  seedVolumes,
  startGatewayFor,
  startNomad,
  startOpenStack,
  type GatewayUnderTest,
  type OpenStackUnderTest,
} from '../support/harness';

const gid = (parts: string[]): string => Buffer.from(JSON.stringify(parts)).toString('base64url');
const LONE = '\ud800';
const V = 'vol-000';

describe('identifiers are checked before any backend call', () => {
  let nomad: NomadSimulator;
  let os: OpenStackUnderTest;
  let gw: GatewayUnderTest;
  let headers: Record<string, string>;
  let osVolume: string;

  beforeAll(async () => {
    nomad = await startNomad();
    seedVolumes(nomad, 1);
    os = await startOpenStack();
    osVolume = os.sim.seedVolume({ project: os.demo, name: 'v', size: 1 });
    gw = await startGatewayFor([{ id: 'east', url: nomad.url }, os.backend('os')]);
    headers = { 'x-nomad-token': MGMT, 'x-auth-token': os.demoToken };
  });
  afterAll(disposeAll);
  beforeEach(() => {
    nomad.clearRequests();
    os.sim.clearRequests();
  });
  afterEach(() => {
    expect(nomad.requests()).toEqual([]);
    expect(os.sim.requests()).toEqual([]);
  });

  /** Sends `query` and expects one BAD_USER_INPUT naming `argument`. */
  async function refused(
    query: string,
    variables: Record<string, unknown>,
    argument: string | RegExp,
  ): Promise<string> {
    const res = await gw.gql(query, variables, headers);
    expect(res.status).toBe(200);
    expect(res.body.errors).toHaveLength(1);
    const err = res.body.errors[0];
    expect(err.extensions).toMatchObject({
      code: 'BAD_USER_INPUT',
      argument: typeof argument === 'string' ? argument : expect.stringMatching(argument),
    });
    return err.message as string;
  }

  const BY_NATIVE = `query($b: ID!, $ns: String, $n: String!) { volumeByNativeId(backend: $b, namespace: $ns, nativeId: $n) { id } }`;
  const BY_ID = `query($id: ID!) { volume(id: $id) { id } }`;
  // The federation entry point: a router resolving a Volume reference.
  const ENTITY = `query($id: ID!) { _entities(representations: [{ __typename: "Volume", id: $id }]) { ... on Volume { id } } }`;

  it.each([
    ['"."', '.'],
    ['".."', '..'],
    ['a lone high surrogate', `a${LONE}`],
    ['a lone low surrogate', '\udc00b'],
    ['a C1 control', 'a\u0085b'],
  ])('should refuse %s as a Nomad volume id, as an argument and inside a global id', async (_why, bad) => {
    await refused(BY_NATIVE, { b: 'east', n: bad }, 'nativeId');
    await refused(BY_ID, { id: gid(['Volume', 'east', 'default', bad]) }, 'id (native id)');
    await refused(ENTITY, { id: gid(['Volume', 'east', 'default', bad]) }, 'id (native id)');
    await refused(
      `mutation($id: ID!) { deleteVolume(input: { volumeId: $id }) { deletedId } }`,
      { id: gid(['Volume', 'east', 'default', bad]) },
      'input.volumeId (native id)',
    );
    await refused(
      `mutation($id: ID!) { deregisterNomadVolume(input: { volumeId: $id }) { deletedId } }`,
      { id: gid(['Volume', 'east', 'default', bad]) },
      'input.volumeId (native id)',
    );
    await refused(
      `mutation($n: String!) { createVolume(input: { backend: "east", name: "x", nomad: { nativeId: $n, plugin: "aws-ebs0", capabilities: [{ accessMode: SINGLE_NODE_WRITER, attachmentMode: FILE_SYSTEM }] } }) { volume { id } } }`,
      { n: bad },
      'input.nomad.nativeId',
    );
  });

  it('should refuse the scope "*" inside a global id, as the namespace argument does outside listing', async () => {
    const msg = await refused(BY_ID, { id: gid(['Volume', 'east', '*', V]) }, 'id');
    expect(msg).toMatch(/scope/);
    await refused(BY_NATIVE, { b: 'east', ns: '*', n: V }, 'namespace');
    await refused(
      `mutation($id: ID!) { deleteVolume(input: { volumeId: $id }) { deletedId } }`,
      { id: gid(['Volume', 'east', '*', V]) },
      'input.volumeId',
    );
    await refused(BY_ID, { id: gid(['Volume', 'os', '*', osVolume]) }, 'id');
  });

  it.each([
    ['an underscore', 'team_a'],
    ['a dot', 'team.a'],
    ['a space inside', 'team a'],
    ['a non-ASCII letter', 'équipe'],
    ['129 characters', 'n'.repeat(129)],
  ])(
    'should refuse a Nomad namespace with %s (Nomad: ^[a-zA-Z0-9-]{1,128}$), argument or scope alike',
    async (_why, ns) => {
      await refused(BY_NATIVE, { b: 'east', ns, n: V }, 'namespace');
      await refused(BY_ID, { id: gid(['Volume', 'east', ns, V]) }, 'id (scope)');
      await refused(
        `{ volumes(filter: { backends: ["east"], namespace: ${JSON.stringify(ns)} }) { nodes { id } } }`,
        {},
        'filter.namespace',
      );
      await refused(
        `query($ns: String) { nomadExternalVolumes(backend: "east", plugin: "aws-ebs0", namespace: $ns) { nodes { externalId } } }`,
        { ns },
        'namespace',
      );
    },
  );

  it('should refuse "." and lone surrogates as plugin and node ids', async () => {
    await refused(`{ storagePlugin(id: "${gid(['Plugin', 'east', '_', '.'])}") { id } }`, {}, 'id (native id)');
    await refused(
      `query($p: String!) { volumeSnapshots(backend: "east", filter: { plugin: $p }) { nodes { id } } }`,
      { p: '..' },
      'filter.plugin',
    );
    await refused(
      `query($p: String!) { nomadExternalVolumes(backend: "east", plugin: $p) { nodes { externalId } } }`,
      { p: `x${LONE}` },
      'plugin',
    );
    await refused(
      `query($n: String) { volumes(filter: { node: $n }) { nodes { id } } }`,
      { n: `x${LONE}` },
      'filter.node',
    );
    await refused(
      `mutation($id: ID!, $n: ID!) { detachVolume(input: { volumeId: $id, target: { node: { nodeId: $n } } }) { volume { id } } }`,
      { id: gid(['Volume', 'east', 'default', V]), n: '.' },
      'input.target.node.nodeId',
    );
    await refused(
      `mutation($id: ID!) { deleteVolumeSnapshot(input: { snapshotId: $id }) { deletedId } }`,
      { id: gid(['Snapshot', 'east', '..', 'snap-1']) },
      'input.snapshotId (scope)',
    );
  });

  it.each([
    ['a name', 'data'],
    ['a short hex string', 'deadbeef'],
    ['a UUID with a path', 'f3731cb9-418a-4e30-9d3d-3fad4aaff94e/x'],
    ['a lone surrogate', `f3731cb9-418a-4e30-9d3d-3fad4aaff94${LONE}`],
  ])('should refuse %s where OpenStack has a UUID (volume, server, attachment ids)', async (_why, bad) => {
    const vol = gid(['Volume', 'os', os.demo, osVolume]);
    await refused(BY_NATIVE, { b: 'os', n: bad }, 'nativeId');
    await refused(BY_ID, { id: gid(['Volume', 'os', os.demo, bad]) }, 'id (native id)');
    await refused(
      `query($id: ID!) { volumeAttachment(id: $id) { id } }`,
      { id: gid(['Attachment', 'os', os.demo, bad, osVolume]) },
      'id (native id)',
    );
    await refused(
      `mutation($id: ID!, $s: ID!) { attachVolume(input: { volumeId: $id, target: { server: { serverId: $s } } }) { operation { id } } }`,
      { id: vol, s: bad },
      'input.target.server.serverId',
    );
    await refused(
      `mutation($id: ID!, $s: ID!) { detachVolume(input: { volumeId: $id, target: { server: { serverId: $s } } }) { volume { id } } }`,
      { id: vol, s: bad },
      'input.target.server.serverId',
    );
    await refused(
      `mutation($id: ID!, $a: ID!) { detachVolume(input: { volumeId: $id, target: { host: { hostAttachmentId: $a } } }) { volume { id } } }`,
      { id: vol, a: gid(['Attachment', 'os', os.demo, osVolume, bad]) },
      'input.target.host.hostAttachmentId (sub id)',
    );
  });

  it('should refuse an OpenStack project id that Keystone cannot have, as argument or scope', async () => {
    await refused(BY_NATIVE, { b: 'os', ns: 'demo project', n: osVolume }, 'namespace');
    await refused(BY_ID, { id: gid(['Volume', 'os', 'a.b', osVolume]) }, 'id (scope)');
    await refused(BY_ID, { id: gid(['Snapshot', 'os', 'p'.repeat(65), osVolume]) }, /^id/);
  });

  it('should still answer well-formed ids (the rules are not too strict)', async () => {
    const nomadRes = await gw.gql(BY_NATIVE, { b: 'east', ns: 'default', n: V }, headers);
    expect(nomadRes.body).toEqual({ data: { volumeByNativeId: { id: gid(['Volume', 'east', 'default', V]) } } });
    const osRes = await gw.gql(BY_NATIVE, { b: 'os', ns: os.demo, n: osVolume }, headers);
    expect(osRes.body.errors).toBeUndefined();
    expect(osRes.body.data.volumeByNativeId).not.toBeNull();
    // These did call the backends: clear so the no-request check after each test holds.
    nomad.clearRequests();
    os.sim.clearRequests();
  });
});

describe('CSI secrets travel in a header: refused when Nomad would lose or misread them', () => {
  let nomad: NomadSimulator;
  let gw: GatewayUnderTest;
  const admin = { 'x-nomad-token': MGMT };
  const SNAPSHOTS = `query($s: [StorageKeyValueInput!]) { volumeSnapshots(backend: "east", filter: { plugin: "aws-ebs0" }, secrets: $s) { nodes { id } } }`;

  beforeAll(async () => {
    nomad = await startNomad();
    seedVolumes(nomad, 1);
    gw = await startGatewayFor([{ id: 'east', url: nomad.url }]);
  });
  afterAll(disposeAll);

  it.each([
    ['an emoji value (not Latin-1)', [{ key: 'k', value: '💥' }], 'secrets[0].value'],
    ['a newline in the value', [{ key: 'k', value: 'a\nb' }], 'secrets[0].value'],
    ['a CR in the key', [{ key: 'k\r', value: 'v' }], 'secrets[0].key'],
    ['"=" in the key', [{ key: 'a=b', value: 'v' }], 'secrets[0].key'],
    ['"," in the key', [{ key: 'a,b', value: 'v' }], 'secrets[0].key'],
    ['"," in the value (would smuggle in a second secret)', [{ key: 'k', value: 'v,admin=1' }], 'secrets[0].value'],
    ['an empty key', [{ key: '', value: 'v' }], 'secrets[0].key'],
    [
      'a repeated key',
      [
        { key: 'k', value: 'a' },
        { key: 'k', value: 'b' },
      ],
      'secrets[1].key',
    ],
  ])('should refuse %s without echoing it, and the backend keeps answering', async (_why, secrets, argument) => {
    nomad.clearRequests();
    const res = await gw.gql(SNAPSHOTS, { s: secrets }, admin);
    expect(res.body.errors[0].extensions).toMatchObject({ code: 'BAD_USER_INPUT', argument });
    for (const s of secrets) if (s.value.length > 1) expect(res.body.errors[0].message).not.toContain(s.value);
    expect(nomad.requests()).toEqual([]);
    const after = await gw.gql(SNAPSHOTS, { s: [{ key: 'k', value: 'fine=é' }] }, admin);
    expect(after.body.errors).toBeUndefined();
    expect(nomad.requests().map((r) => r.headers['x-nomad-csi-secrets'])).toEqual(['k=fine=é']);
  });

  it('should apply the same rules to the secrets of deleteVolume and deleteVolumeSnapshot', async () => {
    nomad.clearRequests();
    const del = await gw.gql(
      `mutation($id: ID!, $s: [StorageKeyValueInput!]) { deleteVolume(input: { volumeId: $id, secrets: $s }) { deletedId } }`,
      { id: gid(['Volume', 'east', 'default', V]), s: [{ key: 'k', value: 'x,y' }] },
      admin,
    );
    expect(del.body.errors[0].extensions).toMatchObject({ code: 'BAD_USER_INPUT', argument: 'input.secrets[0].value' });
    const snap = await gw.gql(
      `mutation($id: ID!, $s: [StorageKeyValueInput!]) { deleteVolumeSnapshot(input: { snapshotId: $id, secrets: $s }) { deletedId } }`,
      { id: gid(['Snapshot', 'east', 'aws-ebs0', 'snap-1']), s: [{ key: 'k', value: '\u0100' }] },
      admin,
    );
    expect(snap.body.errors[0].extensions).toMatchObject({
      code: 'BAD_USER_INPUT',
      argument: 'input.secrets[0].value',
    });
    expect(nomad.requests()).toEqual([]);
  });
});
