import type { NomadSimulator } from '../../simulators/nomad';
import { MGMT, disposeAll, seedVolumes, startGatewayFor, startNomad, type GatewayUnderTest } from '../support/harness';

const admin = { 'x-nomad-token': MGMT };
const gid = (parts: unknown): string => Buffer.from(JSON.stringify(parts)).toString('base64url');

describe('bad input is rejected before any backend call', () => {
  let sim: NomadSimulator;
  let gw: GatewayUnderTest;

  beforeAll(async () => {
    sim = await startNomad();
    seedVolumes(sim, 2);
    gw = await startGatewayFor([{ id: 'east', url: sim.url }]);
  });
  afterAll(disposeAll);
  beforeEach(() => sim.clearRequests());

  const expectBadInput = (res: { body: any }): void => {
    expect(res.body.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    expect(res.body.errors[0].message).toEqual(expect.any(String));
  };

  it.each([
    ['not base64', 'volume:east:default:x'],
    ['garbage', 'AAAA'],
    ['empty', ''],
    ['wrong shape', gid({ a: 1 })],
    ['wrong kind', gid(['Plugin', 'east', '_', 'aws-ebs0'])],
    ['too long', 'A'.repeat(5000)],
  ])('should answer BAD_USER_INPUT for a malformed global id (%s)', async (_why, id) => {
    const res = await gw.gql(`query($id: ID!) { volume(id: $id) { id } }`, { id }, admin);
    expectBadInput(res);
    expect(sim.requests()).toEqual([]);
  });

  it.each([
    ['slash', 'a/b'],
    ['dot', '.'],
    ['dot-dot', '..'],
    ['lone surrogate', 'a\ud800'],
    ['dot-dot segment', 'x/../../v1/volumes'],
    ['encoded slash', 'a%2Fb'],
    ['query', 'a?namespace=other'],
    ['fragment', 'a#b'],
    ['newline', 'a\nb'],
    ['NUL', 'a\u0000b'],
    ['over-long', 'x'.repeat(201)],
  ])(
    'should reject a native id with %s, inside a global id or as an argument, without calling the backend',
    async (_why, native) => {
      const viaId = await gw.gql(
        `query($id: ID!) { volume(id: $id) { id } }`,
        { id: gid(['Volume', 'east', 'default', native]) },
        admin,
      );
      expectBadInput(viaId);
      const viaArg = await gw.gql(
        `query($n: String!) { volumeByNativeId(backend: "east", nativeId: $n) { id } }`,
        { n: native },
        admin,
      );
      expectBadInput(viaArg);
      const viaNs = await gw.gql(
        `query($n: String!) { volumeByNativeId(backend: "east", namespace: $n, nativeId: "vol-000") { id } }`,
        { n: native },
        admin,
      );
      expectBadInput(viaNs);
      const viaNode = await gw.gql(
        `mutation($id: ID!, $n: ID!) { detachVolume(input: { volumeId: $id, target: { node: { nodeId: $n } } }) { volume { id } } }`,
        { id: gid(['Volume', 'east', 'default', 'vol-000']), n: native },
        admin,
      );
      expectBadInput(viaNode);
      expect(sim.requests()).toEqual([]);
    },
  );

  it.each([-1, 501, 100000])('should reject first=%i (the page size) before calling the backend', async (first) => {
    expectBadInput(await gw.gql(`query($f: Int) { volumes(first: $f) { nodes { id } } }`, { f: first }, admin));
    expectBadInput(await gw.gql(`query($f: Int) { storagePlugins(first: $f) { nodes { id } } }`, { f: first }, admin));
    expect(sim.requests()).toEqual([]);
  });

  it('should reject over-long and control-character strings in mutation input', async () => {
    const nomad = {
      nativeId: 'v-new',
      plugin: 'aws-ebs0',
      capabilities: [{ accessMode: 'SINGLE_NODE_WRITER', attachmentMode: 'FILE_SYSTEM' }],
    };
    const m = `mutation($input: CreateVolumeInput!) { createVolume(input: $input) { volume { id } } }`;
    // Each refusal names its argument: the input is well-typed, and the gateway's own rules refuse it.
    const refused = async (input: Record<string, unknown>, argument: string): Promise<void> => {
      const res = await gw.gql(m, { input: { backend: 'east', ...input } }, admin);
      expectBadInput(res);
      expect(res.body.errors[0].extensions.argument).toBe(argument);
    };
    await refused({ name: 'n'.repeat(300), nomad }, 'input.name');
    await refused({ name: 'bad\u0007name', nomad }, 'input.name');
    await refused(
      { name: 'ok', nomad: { ...nomad, parameters: [{ key: 'k', value: 'v'.repeat(2000) }] } },
      'input.nomad.parameters[0].value',
    );
    await refused({ name: 'ok', sizeBytes: -5, nomad }, 'input.sizeBytes');
    await refused({ name: 'ok', sizeBytes: 10, maxSizeBytes: 5, nomad }, 'input.sizeBytes');
    await refused(
      { name: 'ok', nomad: { ...nomad, secrets: [{ key: 'a=b', value: 'x' }] } },
      'input.nomad.secrets[0].key',
    );
    expect(sim.requests()).toEqual([]);
  });

  it('should reject an unknown backend and a forged cursor', async () => {
    expectBadInput(await gw.gql(`{ volumes(filter: { backends: ["nope"] }) { nodes { id } } }`, {}, admin));
    expectBadInput(await gw.gql(`{ volumes(after: "Zm9v") { nodes { id } } }`, {}, admin));
    expectBadInput(
      await gw.gql(
        `query($a: String) { volumes(after: $a) { nodes { id } } }`,
        { a: Buffer.from(JSON.stringify(['east', 'x\u0000y'])).toString('base64url') },
        admin,
      ),
    );
    expect(sim.requests()).toEqual([]);
  });

  it('should quote name filters so a crafted name cannot inject a filter expression', async () => {
    const evil = 'x" or Name != "';
    const res = await gw.gql(
      `query($n: String) { volumes(filter: { name: $n }) { nodes { id } } }`,
      { n: evil },
      admin,
    );
    expect(res.body.errors).toBeUndefined();
    expect(res.body.data.volumes.nodes).toEqual([]);
    const [r] = sim.requests();
    expect(r!.path).toBe('/v1/volumes');
    expect(r!.query.filter).toEqual(['Name == `x" or Name != "`']);
    const tick = await gw.gql(
      `query($n: String) { volumes(filter: { name: $n }) { nodes { id } } }`,
      { n: 'a`b\\' },
      admin,
    );
    expect(tick.body.errors).toBeUndefined();
    expect(sim.requests().at(-1)!.query.filter).toEqual(['Name == "a`b\\\\"']);
    sim.clearRequests();
    const both = await gw.gql(
      `query($n: String) { volumes(filter: { name: $n }) { nodes { id } } }`,
      { n: 'a`"' },
      admin,
    );
    expect(both.body.errors[0].extensions).toMatchObject({ code: 'BAD_USER_INPUT', argument: 'filter.name' });
    expect(sim.requests()).toEqual([]);
  });

  it('should find a volume whose name holds quotes and backslashes exactly', async () => {
    sim.seedVolume({
      ID: 'odd',
      Name: 'say "hi" \\ bye',
      Namespace: 'analytics',
      PluginID: 'aws-ebs0',
      ExternalID: 'ext-odd',
      RequestedCapabilities: [{ AccessMode: 'single-node-writer', AttachmentMode: 'file-system' }],
    });
    const res = await gw.gql(
      `query($n: String) { volumes(filter: { name: $n }) { nodes { nativeId } } }`,
      { n: 'say "hi" \\ bye' },
      admin,
    );
    expect(res.body.data.volumes.nodes).toEqual([{ nativeId: 'odd' }]);
  });

  it('should only ever call the intended paths', async () => {
    const list = await gw.gql(
      `{ volumes(first: 2, filter: { namespace: "default" }) { nodes { id attachments { id } } } }`,
      {},
      admin,
    );
    expect(list.body.errors).toBeUndefined();
    expect(
      sim
        .requests()
        .map((r: { rawPath: string }) => r.rawPath)
        .sort(),
    ).toEqual([
      '/v1/volume/csi/vol-000?namespace=default',
      '/v1/volume/csi/vol-001?namespace=default',
      '/v1/volumes?type=csi&namespace=default&per_page=3',
    ]);
  });
  it("should answer BAD_USER_INPUT, never INTERNAL_SERVER_ERROR, past graphql-js's 50 variable errors", async () => {
    // One list variable with 60 items of the wrong type: 60 coercion errors, of which graphql-js
    // reports 50 and then a notice of its own with no code.
    const res = await gw.gql(
      `query($b: [ID!]) { storagePlugins(backends: $b) { nodes { id } } }`,
      { b: Array.from({ length: 60 }, () => ({})) },
      admin,
    );
    const codes = new Set(res.body.errors.map((e: { extensions: { code: string } }) => e.extensions.code));
    expect(res.body.errors.length).toBeGreaterThan(50);
    expect([...codes]).toEqual(['BAD_USER_INPUT']);
    expect(sim.requests()).toEqual([]);
  });
});
