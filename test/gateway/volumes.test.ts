import type { NomadSimulator } from '../../simulators/nomad';
import {
  ANALYTICS_READ,
  MGMT,
  calls,
  disposeAll,
  seedVolumes,
  startGatewayFor,
  startNomad,
  type GatewayUnderTest,
} from '../support/harness';

const VOLUME_FIELDS = `
  id backend { id kind } namespace nativeId name status backendStatus sizeBytes createdAt updatedAt
  details { __typename ... on NomadVolumeDetails {
    externalId requestedMinBytes requestedMaxBytes accessMode attachmentMode
    requestedCapabilities { accessMode attachmentMode } topologies { segments { key value } }
    schedulable pluginId provider providerVersion controllerRequired
    controllers { healthy expected } nodes { healthy expected } currentReaders currentWriters
    mountOptions { fsType mountFlags } parameters { key value } context { key value }
    createIndex modifyIndex
  } }
  attachments { id state backendState access consumer { ... on VolumeAllocationConsumer { allocationId jobId taskGroup node { id } nodeName clientStatus desiredStatus } } }
`;

describe('volume reads against one Nomad cluster', () => {
  let sim: NomadSimulator;
  let gw: GatewayUnderTest;
  const admin = { 'x-nomad-token': MGMT };

  beforeEach(async () => {
    sim = await startNomad();
    seedVolumes(sim, 3);
    gw = await startGatewayFor([{ id: 'east', url: sim.url }]);
  });
  afterEach(disposeAll);

  it('should map a full Nomad volume onto the unified model, with secrets never exposed and mount flags redacted', async () => {
    const allocId = sim.placeAllocation({
      jobId: 'web',
      taskGroup: 'cache',
      nodeId: 'node-1111',
      volumes: [
        { volumeId: 'vol-001', mode: 'write', accessMode: 'single-node-writer', attachmentMode: 'file-system' },
      ],
    });
    const res = await gw.gql(
      `{ volumeByNativeId(backend: "east", nativeId: "vol-001") { ${VOLUME_FIELDS} } }`,
      {},
      admin,
    );
    expect(res.body.errors).toBeUndefined();
    const v = res.body.data.volumeByNativeId;
    expect(v).toMatchObject({
      backend: { id: 'east', kind: 'NOMAD' },
      namespace: 'default',
      nativeId: 'vol-001',
      name: 'vol 1',
      status: 'IN_USE',
      backendStatus: 'readers=0 writers=1 schedulable=true',
      sizeBytes: 10737418240,
    });
    expect(v.details).toMatchObject({
      __typename: 'NomadVolumeDetails',
      externalId: 'ext-default-vol-001',
      requestedMinBytes: 10737418240,
      requestedMaxBytes: null,
      accessMode: 'SINGLE_NODE_WRITER',
      attachmentMode: 'FILE_SYSTEM',
      requestedCapabilities: [{ accessMode: 'SINGLE_NODE_WRITER', attachmentMode: 'FILE_SYSTEM' }],
      schedulable: true,
      pluginId: 'aws-ebs0',
      provider: 'ebs.csi.aws.com',
      providerVersion: 'v1.38.1',
      controllerRequired: true,
      controllers: { healthy: 1, expected: 1 },
      nodes: { healthy: 2, expected: 2 },
      currentReaders: 0,
      currentWriters: 1,
      mountOptions: { fsType: 'ext4', mountFlags: ['[REDACTED]'] },
    });
    expect(v.attachments).toEqual([
      {
        id: expect.any(String),
        state: 'ATTACHED',
        backendState: 'running',
        access: 'READ_WRITE',
        consumer: {
          allocationId: allocId,
          jobId: 'web',
          taskGroup: 'cache',
          node: { id: 'node-1111' },
          nodeName: 'client-1',
          clientStatus: 'running',
          desiredStatus: 'run',
        },
      },
    ]);
    expect(JSON.stringify(res.body)).not.toContain('hunter2-secret');
    // ModifyTime is Unix nanoseconds beyond 2^53: the gateway keeps every digit.
    const raw = await fetch(`${sim.url}/v1/volume/csi/vol-001`, { headers: { 'x-nomad-token': MGMT } }).then((r) =>
      r.text(),
    );
    const ns = /"ModifyTime":\s*(\d+)/.exec(raw)![1]!;
    expect(v.updatedAt).toBe(
      `${new Date(Number(BigInt(ns) / 1_000_000_000n) * 1000).toISOString().slice(0, 19)}.${ns.slice(-9)}Z`,
    );
    expect(v.createdAt).toBeNull();
  });

  it('should round-trip the global id through volume(id:) and the entity reference (_entities)', async () => {
    const list = await gw.gql(`{ volumes(first: 1) { nodes { id nativeId } } }`, {}, admin);
    const { id, nativeId } = list.body.data.volumes.nodes[0];
    const one = await gw.gql(
      `query($id: ID!, $reps: [_Any!]!) { volume(id: $id) { nativeId } _entities(representations: $reps) { ... on Volume { id name } } }`,
      { id, reps: [{ __typename: 'Volume', id }] },
      admin,
    );
    expect(one.body.data).toEqual({ volume: { nativeId }, _entities: [{ id, name: 'vol 0' }] });
  });

  it('should answer null for a volume that does not exist', async () => {
    const res = await gw.gql(`{ volumeByNativeId(backend: "east", nativeId: "nope") { id } }`, {}, admin);
    expect(res.body).toEqual({ data: { volumeByNativeId: null } });
  });

  it('should show attachment states for pending, running and stopped allocations', async () => {
    const slow = await startNomad({ claimReleaseDelayMs: Infinity });
    seedVolumes(slow, 1, 'default', 'multi');
    slow.seedVolume({
      ID: 'shared',
      Name: 'shared',
      Namespace: 'default',
      PluginID: 'hostpath',
      ExternalID: 'hp-1',
      RequestedCapabilities: [{ AccessMode: 'multi-node-multi-writer', AttachmentMode: 'file-system' }],
    });
    const gw2 = await startGatewayFor([{ id: 'e', url: slow.url }]);
    const pending = slow.placeAllocation({
      jobId: 'a',
      nodeId: 'node-1111',
      clientStatus: 'pending',
      volumes: [
        { volumeId: 'shared', mode: 'write', accessMode: 'multi-node-multi-writer', attachmentMode: 'file-system' },
      ],
    });
    const running = slow.placeAllocation({
      jobId: 'b',
      nodeId: 'node-2222',
      volumes: [
        { volumeId: 'shared', mode: 'read', accessMode: 'multi-node-multi-writer', attachmentMode: 'file-system' },
      ],
    });
    const stopped = slow.placeAllocation({
      jobId: 'c',
      nodeId: 'node-2222',
      volumes: [
        { volumeId: 'shared', mode: 'write', accessMode: 'multi-node-multi-writer', attachmentMode: 'file-system' },
      ],
    });
    slow.setAllocationStatus(stopped, { clientStatus: 'complete', desiredStatus: 'stop' });
    const res = await gw2.gql(
      `{ volumeByNativeId(backend: "e", nativeId: "shared") { status details { ... on NomadVolumeDetails { currentReaders currentWriters } } attachments { state access consumer { ... on VolumeAllocationConsumer { allocationId } } } } }`,
      {},
      admin,
    );
    const v = res.body.data.volumeByNativeId;
    expect(v.status).toBe('IN_USE');
    const byAlloc = Object.fromEntries(v.attachments.map((a: any) => [a.consumer.allocationId, [a.state, a.access]]));
    expect(byAlloc).toEqual({
      [pending]: ['ATTACHING', 'READ_WRITE'],
      [running]: ['ATTACHED', 'READ_ONLY'],
      [stopped]: ['DETACHING', 'READ_WRITE'],
    });
  });

  it('should pass the caller token through, so a read-only namespace token sees only its namespace', async () => {
    seedVolumes(sim, 2, 'analytics', 'an');
    const scoped = await gw.gql(
      `{ volumes(first: 50) { nodes { namespace nativeId } } }`,
      {},
      { 'x-nomad-token': ANALYTICS_READ },
    );
    expect(scoped.body.errors).toBeUndefined();
    expect(scoped.body.data.volumes.nodes).toEqual([
      { namespace: 'analytics', nativeId: 'an-000' },
      { namespace: 'analytics', nativeId: 'an-001' },
    ]);
    const seen = sim
      .requests()
      .filter((r) => r.path === '/v1/volumes')
      .map((r) => r.headers['x-nomad-token']);
    expect(seen).toEqual([ANALYTICS_READ]);
    const all = await gw.gql(`{ volumes(first: 50) { nodes { nativeId } } }`, {}, admin);
    expect(all.body.data.volumes.nodes).toHaveLength(5);
  });

  it('should list plugins and read plugin detail', async () => {
    const res = await gw.gql(
      `{ storagePlugins { nodes { id nativeId provider controllerRequired controllers { healthy expected } nodes { healthy expected } version controllerFeatures instances { role nodeId healthy } } } }`,
      {},
      admin,
    );
    expect(res.body.errors).toBeUndefined();
    const plugins = res.body.data.storagePlugins.nodes;
    expect(plugins.map((p: any) => p.nativeId)).toEqual(['aws-ebs0', 'hostpath']);
    expect(plugins[0]).toMatchObject({
      provider: 'ebs.csi.aws.com',
      controllerRequired: true,
      version: 'v1.38.1',
      controllers: { healthy: 1, expected: 1 },
    });
    expect(plugins[0].controllerFeatures).toEqual(
      expect.arrayContaining(['CREATE_DELETE', 'ATTACH_DETACH', 'CREATE_DELETE_SNAPSHOT']),
    );
    expect(plugins[0].instances.some((i: any) => i.role === 'CONTROLLER')).toBe(true);
    const again = await gw.gql(`query($id: ID!) { storagePlugin(id: $id) { nativeId } }`, { id: plugins[1].id }, admin);
    expect(again.body.data.storagePlugin).toEqual({ nativeId: 'hostpath' });
  });

  it('should report backend capabilities and health', async () => {
    const res = await gw.gql(`{ storageBackends { id kind capabilities health { status latencyMs } } }`);
    expect(res.body.data.storageBackends).toEqual([
      {
        id: 'east',
        kind: 'NOMAD',
        capabilities: expect.arrayContaining(['LIST_VOLUMES', 'CREATE_VOLUME', 'DETACH_VOLUME']),
        health: { status: 'UP', latencyMs: expect.any(Number) },
      },
    ]);
    expect(res.body.data.storageBackends[0].capabilities).not.toContain('ATTACH_VOLUME');
    expect(calls(sim)).toEqual(['GET /v1/status/leader']);
  });
});
