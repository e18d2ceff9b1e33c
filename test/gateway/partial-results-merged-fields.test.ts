/**
 * Issue 27 item 6 (docs/reliability.md R19): every merged field (docs/schema.md, "Merged fields")
 * answers a caller whose token one backend refuses with the others' data, a null item and its
 * error where the refusing backend's items would be, and `omittedBackends` naming it. Two Nomad
 * clusters (a token east knows and west does not, sent as the generic `X-Nomad-Token`) and two
 * OpenStack backends on one region (a valid token for `os-a`, an expired one for `os-b`).
 * Over HTTP against the simulators; a backend that is down, or was sent no credential, is in
 * partial-results.test.ts.
 */
import {
  MGMT,
  NODE1,
  disposeAll,
  seedVolumes,
  startGatewayFor,
  startNomad,
  startOpenStack,
  type GatewayUnderTest,
  type OpenStackUnderTest,
} from '../support/harness';

describe('merged fields, a caller whose token one backend refuses', () => {
  const EAST_ONLY = 'east-only-token';
  let os: OpenStackUnderTest;
  let gw: GatewayUnderTest;
  let server: string;
  const nomadCaller = { 'x-nomad-token': EAST_ONLY };
  const osCaller = (): Record<string, string> => ({
    'x-auth-token-os-a': os.demoToken,
    'x-auth-token-os-b': 'expired-token',
  });
  const LIST =
    'nodes { id consumer { ... on VolumeAllocationConsumer { jobId } ... on VolumeServerConsumer { serverId } } } omittedBackends { backend { id } reason code message }';
  /** An attachment as `backend:consumer` (the backend from its global id). */
  const attachment = (a: any): string =>
    `${JSON.parse(Buffer.from(a.id, 'base64url').toString())[1]}:${a.consumer.jobId ?? a.consumer.serverId}`;
  /**
   * What a merged list must be: the answering backends' items (each shown by `show`), then one null
   * for the refusing backend with its error at that item's path, and that backend FAILED in `omittedBackends`.
   */
  const expectPartial = (
    body: any,
    path: Array<string | number>,
    show: (item: any) => string,
    items: string[],
    refusing: string,
    code: string,
  ): void => {
    const list = path.reduce((o: any, k) => o?.[k], body.data);
    expect(list?.nodes.map((n: any) => n && show(n))).toEqual([...items, null]);
    expect(list.omittedBackends).toEqual([
      { backend: { id: refusing }, reason: 'FAILED', code, message: expect.any(String) },
    ]);
    expect(body.errors).toEqual([
      expect.objectContaining({
        path: [...path, 'nodes', items.length],
        extensions: expect.objectContaining({ code, backend: refusing }),
      }),
    ]);
    expect(body.errors[0].message).toBe(list.omittedBackends[0].message);
  };

  beforeAll(async () => {
    const east = await startNomad();
    const west = await startNomad();
    seedVolumes(east, 2, 'default', 'e');
    seedVolumes(west, 2, 'default', 'w');
    east.addToken({ secret: EAST_ONLY, namespaces: { default: 'read' } });
    for (const [sim, v] of [
      [east, 'e-000'],
      [west, 'w-000'],
    ] as const) {
      sim.placeAllocation({
        jobId: `job-${v}`,
        nodeId: NODE1,
        volumes: [{ volumeId: v, mode: 'write', accessMode: 'single-node-writer', attachmentMode: 'file-system' }],
      });
    }
    os = await startOpenStack();
    server = os.sim.seedServer({ project: os.demo, name: 'app-1' });
    os.sim.attachNow(server, os.sim.seedVolume({ project: os.demo, name: 'data', size: 1 }), {});
    gw = await startGatewayFor([
      { id: 'east', url: east.url },
      { id: 'west', url: west.url },
      os.backend('os-a'),
      os.backend('os-b'),
    ]);
  });
  afterAll(disposeAll);

  // Nomad answers an unknown token 403 (FORBIDDEN); Keystone an expired one 401 (UNAUTHENTICATED).
  it("volumes: east's volumes, a null item for west", async () => {
    const res = await gw.gql(
      '{ volumes(filter: { backends: ["east", "west"] }) { nodes { nativeId } omittedBackends { backend { id } reason code message } } }',
      {},
      nomadCaller,
    );
    expectPartial(res.body, ['volumes'], (v) => v.nativeId, ['e-000', 'e-001'], 'west', 'FORBIDDEN');
  });

  it("storagePlugins: east's plugins, a null item for west", async () => {
    const res = await gw.gql(
      '{ storagePlugins(backends: ["east", "west"]) { nodes { nativeId } omittedBackends { backend { id } reason code message } } }',
      {},
      nomadCaller,
    );
    expectPartial(res.body, ['storagePlugins'], (p) => p.nativeId, ['aws-ebs0', 'hostpath'], 'west', 'FORBIDDEN');
  });

  it("nodeVolumeClaimList: east's claim, a null item for west (the deprecated nodeVolumeClaims still fails whole)", async () => {
    const q = `query($n: ID!) { nodeVolumeClaimList(nodeId: $n) { ${LIST} } }`;
    const res = await gw.gql(q, { n: NODE1 }, nomadCaller);
    expectPartial(res.body, ['nodeVolumeClaimList'], attachment, ['east:job-e-000'], 'west', 'FORBIDDEN');
    // With a token both clusters accept: both claims, in configuration order, omitting none.
    const all = await gw.gql(q, { n: NODE1 }, { 'x-nomad-token': MGMT });
    expect(all.body.errors).toBeUndefined();
    expect(all.body.data.nodeVolumeClaimList.nodes.map(attachment)).toEqual(['east:job-e-000', 'west:job-w-000']);
    expect(all.body.data.nodeVolumeClaimList.omittedBackends).toEqual([]);
    // The token sent for east alone (west called anonymously, which its ACLs refuse): the same, as issue 27 found it.
    const eastHeader = await gw.gql(q, { n: NODE1 }, { 'x-nomad-token-east': EAST_ONLY });
    expectPartial(eastHeader.body, ['nodeVolumeClaimList'], attachment, ['east:job-e-000'], 'west', 'UNAUTHENTICATED');
    const whole = await gw.gql('query($n: ID!) { nodeVolumeClaims(nodeId: $n) { id } }', { n: NODE1 }, nomadCaller);
    expect(whole.body.data.nodeVolumeClaims).toBeNull();
    expect(whole.body.errors).toEqual([
      expect.objectContaining({
        path: ['nodeVolumeClaims'],
        extensions: expect.objectContaining({ code: 'FORBIDDEN', backend: 'west' }),
      }),
    ]);
  });

  it("NomadNode.volumeClaimList (federation's _entities): the same", async () => {
    const res = await gw.gql(
      `query($r: [_Any!]!) { _entities(representations: $r) { ... on NomadNode { volumeClaimList { ${LIST} } } } }`,
      { r: [{ __typename: 'NomadNode', id: NODE1 }] },
      nomadCaller,
    );
    expectPartial(res.body, ['_entities', 0, 'volumeClaimList'], attachment, ['east:job-e-000'], 'west', 'FORBIDDEN');
  });

  it("serverVolumeAttachmentList: os-a's attachment, a null item for os-b; os-b only named when no token was sent for it", async () => {
    const q = `query($s: ID!) { serverVolumeAttachmentList(serverId: $s) { ${LIST} } }`;
    const res = await gw.gql(q, { s: server }, osCaller());
    expectPartial(res.body, ['serverVolumeAttachmentList'], attachment, [`os-a:${server}`], 'os-b', 'UNAUTHENTICATED');
    const noToken = await gw.gql(q, { s: server }, { 'x-auth-token-os-a': os.demoToken });
    expect(noToken.body.errors).toBeUndefined();
    expect(noToken.body.data.serverVolumeAttachmentList.nodes.map(attachment)).toEqual([`os-a:${server}`]);
    expect(noToken.body.data.serverVolumeAttachmentList.omittedBackends).toEqual([
      {
        backend: { id: 'os-b' },
        reason: 'NO_CREDENTIAL',
        code: null,
        message: expect.stringContaining('X-Auth-Token'),
      },
    ]);
  });

  it("Server.volumeAttachmentList (federation's _entities): the same", async () => {
    const res = await gw.gql(
      `query($r: [_Any!]!) { _entities(representations: $r) { ... on Server { volumeAttachmentList { ${LIST} } } } }`,
      { r: [{ __typename: 'Server', id: server }] },
      osCaller(),
    );
    expectPartial(
      res.body,
      ['_entities', 0, 'volumeAttachmentList'],
      attachment,
      [`os-a:${server}`],
      'os-b',
      'UNAUTHENTICATED',
    );
  });
});
