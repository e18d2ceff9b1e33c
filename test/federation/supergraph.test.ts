/**
 * The v2 gateway as one subgraph of a supergraph, with Apollo's own tools unmodified (issue 10,
 * item 5): its SDL is fetched from the running gateway with `{ _service { sdl } }` (what a router
 * does), composed by `@apollo/composition` with a compute subgraph (owns `Server`) and a scheduler
 * subgraph (owns `NomadNode`), and `@apollo/gateway` runs queries over the three on loopback,
 * forwarding `X-Auth-Token` and `X-Nomad-Token-<id>` as a router would. Backend calls are counted
 * from the simulators' request logs; each expected count says where it comes from.
 */
import { LIST_STRATEGY_THRESHOLD } from '../../adapters/openstack/volumes/batch';
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
import { startComputeSubgraph, type ComputeSubgraph } from './compute-subgraph';
import { startSubgraphServer, type RunningSubgraph } from './subgraph-server';
import {
  composeSupergraph,
  startSupergraph,
  stopAll,
  type RunningFederatedGateway,
  type SubgraphDefinition,
} from './supergraph';

/** A scheduler team's subgraph: owns Nomad client nodes, keyed by the Nomad node id. */
const SCHEDULER_TYPE_DEFS = /* GraphQL */ `
extend schema @link(url: "https://specs.apollo.dev/federation/v2.9", import: ["@key"])
type Query {
  "Every client node the scheduler knows."
  schedulerNodes: [NomadNode!]!
}
"A Nomad client node, owned by the scheduler team."
type NomadNode @key(fields: "id") {
  "The Nomad node id."
  id: ID!
  "The node's name."
  name: String!
}
`;
const NODES = [
  { id: 'node-1111', name: 'client-1' },
  { id: 'node-2222', name: 'client-2' },
];
const startScheduler = (): Promise<RunningSubgraph> =>
  startSubgraphServer({
    name: 'scheduler',
    typeDefs: SCHEDULER_TYPE_DEFS,
    resolvers: {
      Query: { schedulerNodes: () => NODES },
      NomadNode: { __resolveReference: (ref: { id: string }) => NODES.find((n) => n.id === ref.id) ?? null },
    },
  });

const UUID = /[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}/g;
/** OpenStack requests as `service METHOD path` (ids as `:id`), counted. */
const osCalls = (os: OpenStackUnderTest): Record<string, number> =>
  tally(os.sim.requests().map((r) => `${r.service} ${r.method} ${r.path.replace(UUID, ':id')}`));
/** Nomad requests as `METHOD path`, counted. */
const nomadCalls = (sim: NomadSimulator): Record<string, number> =>
  tally(sim.requests().map((r) => `${r.method} ${r.path}`));
const tally = (lines: string[]): Record<string, number> =>
  lines.reduce<Record<string, number>>((m, c) => ((m[c] = (m[c] ?? 0) + 1), m), {});

const SERVERS_JOIN =
  '{ inventoryServers { id name volumeAttachments { id state volume { id name status sizeBytes } } } }';
const ENTITIES = 'query($r: [_Any!]!) { _entities(representations: $r) { ... on Volume { id name status } } }';

describe('the v2 gateway in a supergraph (compute + scheduler + volumes)', () => {
  let os: OpenStackUnderTest;
  let nomad: NomadSimulator;
  let gw: GatewayUnderTest;
  let volumes: SubgraphDefinition;
  let compute: ComputeSubgraph;
  let scheduler: RunningSubgraph;
  let router: RunningFederatedGateway;
  const serverIds: string[] = [];
  /** Nova server id → names of the volumes attached to it. */
  const attached = new Map<string, string[]>();
  /** Cinder volume name → global id. */
  const cinderIds = new Map<string, string>();
  /** Each counted query gets a token Keystone has not validated for this gateway yet: one validation. */
  const freshToken = (): string => os.sim.issueToken({ user: 'demo', project: 'demo' });
  const headers = (token: string): Record<string, string> => ({ 'X-Auth-Token': token, 'X-Nomad-Token-east': MGMT });

  beforeAll(async () => {
    os = await startOpenStack();
    // Four servers with three volumes each (12 distinct volumes: at least the list threshold) and one with none.
    for (let s = 0; s < 5; s++) {
      const id = os.sim.seedServer({ project: os.demo, name: `app-${s}` });
      serverIds.push(id);
      attached.set(id, []);
      for (let v = 0; s < 4 && v < 3; v++) {
        os.sim.attachNow(id, os.sim.seedVolume({ project: os.demo, name: `data-${s}-${v}`, size: 1 + v }));
        attached.get(id)!.push(`data-${s}-${v}`);
      }
    }
    os.sim.seedVolume({ project: os.demo, name: 'spare', size: 1 });

    nomad = await startNomad();
    seedVolumes(nomad, 4);
    nomad.seedVolume({
      ID: 'shared',
      Name: 'shared',
      Namespace: 'default',
      PluginID: 'hostpath',
      ExternalID: 'hp-1',
      RequestedCapabilities: [{ AccessMode: 'multi-node-multi-writer', AttachmentMode: 'file-system' }],
    });
    const rw = { mode: 'write' as const, accessMode: 'single-node-writer', attachmentMode: 'file-system' };
    const shared = {
      volumeId: 'shared',
      mode: 'write' as const,
      accessMode: 'multi-node-multi-writer',
      attachmentMode: 'file-system',
    };
    // Five claims on four distinct volumes: `shared` is claimed from both nodes; vol-003 by none.
    nomad.placeAllocation({
      jobId: 'web',
      nodeId: 'node-1111',
      volumes: [{ volumeId: 'vol-000', ...rw }, { volumeId: 'vol-001', ...rw }, shared],
    });
    nomad.placeAllocation({ jobId: 'db', nodeId: 'node-2222', volumes: [{ volumeId: 'vol-002', ...rw }, shared] });

    gw = await startGatewayFor([{ id: 'east', url: nomad.url }, os.backend('os')]);
    // What a router does first: ask the subgraph for its SDL (no credential needed).
    const sdl = await gw.gql('{ _service { sdl } }');
    expect(sdl.body.errors).toBeUndefined();
    volumes = { name: 'volumes', url: gw.gateway.url, typeDefs: sdl.body.data._service.sdl };
    compute = await startComputeSubgraph(serverIds.map((id, i) => ({ id, name: `app-${i}` })));
    scheduler = await startScheduler();
    router = await startSupergraph([compute, scheduler, volumes]);

    // Warm-up with another token: the Cinder and Nova version documents are cached per backend
    // (10 min), so each counted query below pays only its own calls.
    const list = await gw.gql(
      '{ volumes(first: 50, filter: { backends: ["os"] }) { nodes { id name } } }',
      {},
      headers(os.adminToken),
    );
    expect(list.body.errors).toBeUndefined();
    for (const v of list.body.data.volumes.nodes) cinderIds.set(v.name, v.id);
    expect(cinderIds.size).toBe(13);
    expect((await router.post(SERVERS_JOIN, undefined, headers(os.adminToken))).body.errors).toBeUndefined();
  });
  afterAll(async () => {
    await stopAll(router, scheduler, compute);
    await disposeAll();
  });
  beforeEach(() => {
    os.sim.clearRequests();
    nomad.clearRequests();
    compute.resetRequests();
    scheduler.resetRequests();
    router.resetFetches();
  });

  it('composes the SDL the gateway serves with the compute subgraph: no errors and no hints', () => {
    const c = composeSupergraph([compute, volumes]);
    expect(c.errors.map((e) => e.message)).toEqual([]);
    // Our subgraph leaves the description of entities it does not own (Server, NomadNode) to their
    // owners, so the two never disagree; everything it owns is described.
    expect(c.hints.map((h) => `${h.definition.code}: ${h.message}`)).toEqual([]);
    // Server is one entity owned by both by key; our field is resolved by the volumes subgraph, with its cost kept for demand control.
    expect(c.supergraphSdl).toMatch(
      /type Server\s+@join__type\(graph: COMPUTE, key: "id"\)\s+@join__type\(graph: VOLUMES, key: "id"\)/,
    );
    expect(c.supergraphSdl).toMatch(
      /volumeAttachments: \[VolumeAttachment!\] @join__field\(graph: VOLUMES\) @cost\(weight: 1\) @listSize\(assumedSize: 5\)/,
    );
  });

  it('composes all three with no errors and no hints', () => {
    const c = composeSupergraph([compute, scheduler, volumes]);
    expect(c.errors.map((e) => e.message)).toEqual([]);
    expect(c.hints.map((h) => `${h.definition.code}: ${h.message}`)).toEqual([]);
    expect(c.supergraphSdl).toMatch(
      /type NomadNode\s+@join__type\(graph: SCHEDULER, key: "id"\)\s+@join__type\(graph: VOLUMES, key: "id"\)/,
    );
  });

  it('joins compute servers to their volume attachments and volumes in one _entities fetch and one de-duplicated pass per loader', async () => {
    const res = await router.post(SERVERS_JOIN, undefined, headers(freshToken()));
    expect(res.status).toBe(200);
    expect(res.body.errors).toBeUndefined();
    const servers = res.body.data.inventoryServers;
    expect(servers.map((s: any) => s.id)).toEqual(serverIds);
    for (const s of servers) {
      const names = attached.get(s.id)!;
      expect(s.volumeAttachments.map((a: any) => a.volume.name).sort()).toEqual([...names].sort());
      for (const a of s.volumeAttachments) {
        expect(a.state).toBe('ATTACHED');
        expect(a.volume).toEqual({
          id: cinderIds.get(a.volume.name),
          name: a.volume.name,
          status: 'IN_USE',
          sizeBytes: (1 + Number(a.volume.name.at(-1))) * 2 ** 30,
        });
      }
    }
    // The plan: one root fetch from compute, then ONE _entities fetch carrying all 5 servers.
    expect(router.fetches()).toEqual([
      { subgraph: 'compute', representations: 0 },
      { subgraph: 'volumes', representations: 5 },
    ]);
    // Backend calls, derived from domain/loaders.ts and adapters/openstack/attachments/servers.ts and volumes/batch.ts:
    // - Keystone 1: the fresh token is validated once (then cached 60 s under its hash); the version
    //   documents were cached by the warm-up.
    // - Nova 5: the 5 Server.volumeAttachments resolvers fill one serverAttachments batch (one loader
    //   pass), which reads os-volume_attachments once per server: Nova lists attachments per server only.
    // - Cinder 1 list: the batch checks Nova's attachments against Cinder's view of the 12 volumes
    //   (12 >= LIST_STRATEGY_THRESHOLD.volumes, so one /volumes/detail instead of 12 shows), read
    //   through the execution's volume loader, so the 12 VolumeAttachment.volume resolvers find them
    //   there and read nothing more (see the next test: the same count without `volume`).
    expect(osCalls(os)).toEqual({
      'keystone GET /v3/auth/tokens': 1,
      'nova GET /v2.1/servers/:id/os-volume_attachments': 5,
      'cinder GET /v3/:id/volumes/detail': 1,
    });
    expect(compute.requests().map((r) => r.representations)).toEqual([0]);
  });

  it('costs the same when the join does not ask for the volumes: the attachment check already loaded them', async () => {
    const res = await router.post(
      '{ inventoryServers { id volumeAttachments { id state device } } }',
      undefined,
      headers(freshToken()),
    );
    expect(res.body.errors).toBeUndefined();
    expect(res.body.data.inventoryServers.flatMap((s: any) => s.volumeAttachments)).toHaveLength(12);
    // Same as above without VolumeAttachment.volume: the attachment check's one list only.
    expect(osCalls(os)).toEqual({
      'keystone GET /v3/auth/tokens': 1,
      'nova GET /v2.1/servers/:id/os-volume_attachments': 5,
      'cinder GET /v3/:id/volumes/detail': 1,
    });
  });

  it('joins scheduler nodes to their Nomad volume claims: one list per node, one read per distinct volume', async () => {
    const res = await router.post(
      '{ schedulerNodes { id name volumeClaims { id state consumer { ... on VolumeAllocationConsumer { jobId node { id name } } } } } }',
      undefined,
      headers(freshToken()),
    );
    expect(res.body.errors).toBeUndefined();
    const claims = (i: number): string[] =>
      res.body.data.schedulerNodes[i].volumeClaims.map(
        (c: any) => `${c.consumer.jobId}@${c.consumer.node.name}:${c.state}`,
      );
    expect(claims(0)).toEqual(['web@client-1:ATTACHED', 'web@client-1:ATTACHED', 'web@client-1:ATTACHED']);
    expect(claims(1)).toEqual(['db@client-2:ATTACHED', 'db@client-2:ATTACHED']);
    // scheduler root → volumes _entities (2 nodes) → scheduler _entities for the consumers' node names.
    expect(router.fetches()).toEqual([
      { subgraph: 'scheduler', representations: 0 },
      { subgraph: 'volumes', representations: 2 },
      { subgraph: 'scheduler', representations: 5 },
    ]);
    // Nomad has no multi-get: NomadNode.volumeClaims fills one nodeClaims batch, which lists the
    // volumes of each node (2 lists, node_id filter, every namespace) and reads each distinct
    // volume once for its allocations (4 reads: `shared` is claimed from both nodes, read once).
    expect(nomadCalls(nomad)).toEqual({
      'GET /v1/volumes': 2,
      'GET /v1/volume/csi/vol-000': 1,
      'GET /v1/volume/csi/vol-001': 1,
      'GET /v1/volume/csi/vol-002': 1,
      'GET /v1/volume/csi/shared': 1,
    });
    // The router forwarded the per-backend token; the gateway sent it to Nomad.
    expect(nomad.requests().every((r) => r.headers['x-nomad-token'] === MGMT)).toBe(true);
    expect(osCalls(os)).toEqual({});
  });

  it('reads each claimed Nomad volume once even when the claims ask for their volume (the claims read goes through the loader)', async () => {
    const res = await router.post(
      '{ schedulerNodes { id volumeClaims { id volume { id name status } } } }',
      undefined,
      headers(freshToken()),
    );
    expect(res.body.errors).toBeUndefined();
    expect(
      res.body.data.schedulerNodes.map((n: any) =>
        n.volumeClaims.map((c: any) => `${c.volume.name}:${c.volume.status}`).sort(),
      ),
    ).toEqual([
      ['shared:IN_USE', 'vol 0:IN_USE', 'vol 1:IN_USE'],
      ['shared:IN_USE', 'vol 2:IN_USE'],
    ]);
    // 2 lists + 4 reads as above; nodeClaims read the volumes through the execution's volume loader,
    // so the 5 VolumeAttachment.volume resolvers find them there: no more reads.
    expect(nomadCalls(nomad)).toEqual({
      'GET /v1/volumes': 2,
      'GET /v1/volume/csi/vol-000': 1,
      'GET /v1/volume/csi/vol-001': 1,
      'GET /v1/volume/csi/vol-002': 1,
      'GET /v1/volume/csi/shared': 1,
    });
  });

  it('resolves many Volume entities of one Cinder project with one list call, not one show per id', async () => {
    const names = [...cinderIds.keys()].slice(0, LIST_STRATEGY_THRESHOLD.volumes);
    // A router sends exactly this to the subgraph; one id twice, as when two parents reference it.
    const reps = [...names, names[0]!].map((n) => ({ __typename: 'Volume', id: cinderIds.get(n) }));
    const res = await gw.gql(ENTITIES, { r: reps }, headers(freshToken()));
    expect(res.body.errors).toBeUndefined();
    expect(res.body.data._entities.map((v: any) => v.name)).toEqual([...names, names[0]]);
    // One volume-loader pass with 8 distinct keys (the repeat is de-duplicated) in one project:
    // 8 >= LIST_STRATEGY_THRESHOLD.volumes, so one /volumes/detail page and a pick. Plus the token.
    expect(osCalls(os)).toEqual({ 'keystone GET /v3/auth/tokens': 1, 'cinder GET /v3/:id/volumes/detail': 1 });
  });

  it('shows Volume entities one by one below the list threshold', async () => {
    const names = [...cinderIds.keys()].slice(0, LIST_STRATEGY_THRESHOLD.volumes - 1);
    const reps = names.map((n) => ({ __typename: 'Volume', id: cinderIds.get(n) }));
    const token = freshToken();
    const res = await gw.gql(ENTITIES, { r: reps }, headers(token));
    expect(res.body.errors).toBeUndefined();
    expect(res.body.data._entities.map((v: any) => v.name)).toEqual(names);
    // 7 ids: 7 parallel shows rather than a page of the whole project.
    // The 7 shows start together with a fresh token and share one Keystone validation.
    expect(osCalls(os)).toEqual({ 'keystone GET /v3/auth/tokens': 1, 'cinder GET /v3/:id/volumes/:id': names.length });
    // With the token validated, the same read costs the shows alone.
    os.sim.clearRequests();
    expect((await gw.gql(ENTITIES, { r: reps }, headers(token))).body.errors).toBeUndefined();
    expect(osCalls(os)).toEqual({ 'cinder GET /v3/:id/volumes/:id': names.length });
  });
});
