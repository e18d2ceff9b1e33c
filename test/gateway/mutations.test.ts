import type { NomadSimulator } from '../../simulators/nomad';
import {
  ANALYTICS_READ,
  ANALYTICS_WRITE,
  MGMT,
  calls,
  disposeAll,
  seedVolumes,
  startGatewayFor,
  startNomad,
  waitOperation,
  type GatewayUnderTest,
} from '../support/harness';
import { until } from '../support/until';

const admin = { 'x-nomad-token': MGMT };
const CREATE = `mutation($input: CreateVolumeInput!) { createVolume(input: $input) {
  volume { id nativeId namespace name sizeBytes status details { ... on NomadVolumeDetails { externalId mountOptions { fsType mountFlags } requestedCapabilities { accessMode attachmentMode } topologies { segments { key value } } } } }
  operation { kind state targetId } } }`;
const REGISTER = `mutation($input: RegisterNomadVolumeInput!) { registerNomadVolume(input: $input) { volume { id nativeId details { ... on NomadVolumeDetails { externalId context { key value } } } } operation { kind state targetId } } }`;
const cap = [{ accessMode: 'SINGLE_NODE_WRITER', attachmentMode: 'FILE_SYSTEM' }];
const VOLUME = `status attachments { state } details { ... on NomadVolumeDetails { currentWriters } }`;
const DETACH = `mutation($id: ID!) { detachVolume(input: { volumeId: $id, target: { node: { nodeId: "node-2222" } } }) {
  volume { ${VOLUME} } operation { id kind state } } }`;
const READ = `query($id: ID!) { volume(id: $id) { ${VOLUME} } }`;
/** The volume and an operation, read together. */
const READ_BOTH = `query($id: ID!, $op: ID!) { volume(id: $id) { ${VOLUME} } volumeOperation(id: $op) { state backendStatus } }`;
/** vol-000 with the stopped allocation's claim still held (DETACHING), and freed. */
const HELD = { status: 'IN_USE', attachments: [{ state: 'DETACHING' }], details: { currentWriters: 1 } };
const FREED = { status: 'AVAILABLE', attachments: [], details: { currentWriters: 0 } };
const HELD_STATUS = 'readers=0 writers=1 schedulable=true';
const FREED_STATUS = 'readers=0 writers=0 schedulable=true';

describe('Nomad write operations as mutations', () => {
  let sim: NomadSimulator;
  let gw: GatewayUnderTest;

  beforeEach(async () => {
    sim = await startNomad({ claimReleaseDelayMs: Infinity });
    seedVolumes(sim, 1);
    gw = await startGatewayFor([{ id: 'east', url: sim.url }], { operationOptions: { pollMs: 50, maxPollMs: 100 } });
  });
  afterEach(disposeAll);

  /** A stopped allocation on node-2222 whose claim on vol-000 Nomad keeps (DETACHING) until detached; vol-000's id. */
  async function stoppedClaim(): Promise<string> {
    const alloc = sim.placeAllocation({
      jobId: 'old',
      nodeId: 'node-2222',
      volumes: [
        { volumeId: 'vol-000', mode: 'write', accessMode: 'single-node-writer', attachmentMode: 'file-system' },
      ],
    });
    sim.setAllocationStatus(alloc, { clientStatus: 'complete', desiredStatus: 'stop' });
    const id = (await gw.gql(`{ volumes { nodes { id } } }`, {}, admin)).body.data.volumes.nodes[0].id as string;
    expect((await gw.gql(READ, { id }, admin)).body.data.volume).toEqual(HELD);
    return id;
  }

  it('should create a volume in the provider and read it back, sending secrets only in the request body', async () => {
    const res = await gw.gql(
      CREATE,
      {
        input: {
          backend: 'east',
          name: 'db data',
          sizeBytes: 21474836480,
          nomad: {
            nativeId: 'db-data',
            plugin: 'aws-ebs0',
            capabilities: cap,
            mountOptions: { fsType: 'xfs', mountFlags: ['noatime'] },
            secrets: [{ key: 'kms', value: 'very-secret-key' }],
            parameters: [{ key: 'type', value: 'gp3' }],
          },
        },
      },
      admin,
    );
    expect(res.body.errors).toBeUndefined();
    const v = res.body.data.createVolume.volume;
    expect(v).toMatchObject({
      nativeId: 'db-data',
      namespace: 'default',
      name: 'db data',
      sizeBytes: 21474836480,
      status: 'AVAILABLE',
      details: { mountOptions: { fsType: 'xfs', mountFlags: ['[REDACTED]'] }, requestedCapabilities: cap },
    });
    expect(v.details.externalId).toMatch(/^vol-/);
    // Nomad creates synchronously: the operation is SUCCEEDED at once.
    expect(res.body.data.createVolume.operation).toEqual({ kind: 'CREATE_VOLUME', state: 'SUCCEEDED', targetId: v.id });
    expect(JSON.stringify(res.body)).not.toContain('very-secret-key');
    const [put] = sim.requests().filter((r) => r.method === 'PUT');
    expect(put!.path).toBe('/v1/volume/csi/db-data/create');
    expect(JSON.parse(put!.body)).toMatchObject({
      Volumes: [
        {
          ID: 'db-data',
          Name: 'db data',
          Namespace: 'default',
          PluginID: 'aws-ebs0',
          RequestedCapacityMin: 21474836480,
          Secrets: { kms: 'very-secret-key' },
          Parameters: { type: 'gp3' },
          RequestedCapabilities: [{ AccessMode: 'single-node-writer', AttachmentMode: 'file-system' }],
          MountOptions: { FSType: 'xfs', MountFlags: ['noatime'] },
        },
      ],
    });
  });

  it('should register an existing provider volume and deregister it', async () => {
    sim.addExternalVolume('aws-ebs0', { ExternalID: 'vol-0abc', CapacityBytes: 5368709120 });
    const res = await gw.gql(
      REGISTER,
      {
        input: {
          backend: 'east',
          namespace: 'analytics',
          nativeId: 'imported',
          name: 'imported',
          plugin: 'aws-ebs0',
          externalId: 'vol-0abc',
          capabilities: cap,
          context: [{ key: 'partition', value: '0' }],
        },
      },
      { 'x-nomad-token': ANALYTICS_WRITE },
    );
    expect(res.body.errors).toBeUndefined();
    const v = res.body.data.registerNomadVolume.volume;
    expect(v).toMatchObject({
      nativeId: 'imported',
      details: { externalId: 'vol-0abc', context: [{ key: 'partition', value: '0' }] },
    });
    expect(res.body.data.registerNomadVolume.operation).toEqual({
      kind: 'REGISTER_VOLUME',
      state: 'SUCCEEDED',
      targetId: v.id,
    });
    const del = await gw.gql(
      `mutation($id: ID!) { deregisterNomadVolume(input: { volumeId: $id }) { deletedId operation { kind state } } }`,
      { id: v.id },
      { 'x-nomad-token': ANALYTICS_WRITE },
    );
    expect(del.body.data.deregisterNomadVolume).toEqual({
      deletedId: v.id,
      operation: { kind: 'DEREGISTER_VOLUME', state: 'SUCCEEDED' },
    });
    const after = await gw.gql(
      `{ volumeByNativeId(backend: "east", namespace: "analytics", nativeId: "imported") { id } }`,
      {},
      admin,
    );
    expect(after.body.data.volumeByNativeId).toBeNull();
  });

  it('should refuse writes to a token that may only read', async () => {
    const res = await gw.gql(
      REGISTER,
      {
        input: {
          backend: 'east',
          namespace: 'analytics',
          nativeId: 'x',
          name: 'x',
          plugin: 'aws-ebs0',
          externalId: 'vol-1',
          capabilities: cap,
        },
      },
      { 'x-nomad-token': ANALYTICS_READ },
    );
    expect(res.body.errors[0].extensions.code).toBe('FORBIDDEN');
  });

  it("should map Nomad's plain-text 500s to typed codes with the backend message", async () => {
    const res = await gw.gql(
      CREATE,
      { input: { backend: 'east', name: 'x', nomad: { nativeId: 'x', plugin: 'no-such-plugin', capabilities: cap } } },
      admin,
    );
    expect(res.body.errors[0].extensions).toMatchObject({
      code: 'NOT_FOUND',
      httpStatus: 500,
      backendMessage: 'no CSI plugin named: no-such-plugin could be found',
    });
    // Nomad needs the caller to choose the id: without Nomad's part there is none.
    const missing = await gw.gql(CREATE, { input: { backend: 'east', name: 'x' } }, admin);
    expect(missing.body.errors[0].extensions).toMatchObject({ code: 'BAD_USER_INPUT', argument: 'input.nomad' });
  });

  it('should force-deregister a volume whose only claim belongs to a terminal allocation', async () => {
    const alloc = sim.placeAllocation({
      jobId: 'old',
      nodeId: 'node-1111',
      volumes: [
        { volumeId: 'vol-000', mode: 'write', accessMode: 'single-node-writer', attachmentMode: 'file-system' },
      ],
    });
    sim.setAllocationStatus(alloc, { clientStatus: 'complete', desiredStatus: 'stop' });
    const id = (await gw.gql(`{ volumes { nodes { id } } }`, {}, admin)).body.data.volumes.nodes[0].id;
    const plain = await gw.gql(
      `mutation($id: ID!) { deregisterNomadVolume(input: { volumeId: $id }) { deletedId } }`,
      { id },
      admin,
    );
    expect(plain.body.errors[0].extensions.code).toBe('CONFLICT');
    const forced = await gw.gql(
      `mutation($id: ID!) { deregisterNomadVolume(input: { volumeId: $id, force: true }) { deletedId } }`,
      { id },
      admin,
    );
    expect(forced.body.errors).toBeUndefined();
    expect(
      sim
        .requests()
        .filter((r) => r.method === 'DELETE')
        .map((r) => r.query.force),
    ).toEqual([undefined, ['true']]);
  });

  it("should detach a stopped allocation's claim from a node, SUCCEEDED only when the volume shows it freed", async () => {
    const id = await stoppedClaim();
    const res = await gw.gql(DETACH, { id }, admin);
    expect(res.body.errors).toBeUndefined();
    const { volume, operation } = res.body.data.detachVolume;
    expect(operation.kind).toBe('DETACH_VOLUME');
    // Nomad's volume watcher frees the claim after the DELETE answered: done at once if it already
    // has (the common case), else followed until it has.
    if (operation.state === 'SUCCEEDED') expect(volume).toEqual(FREED);
    else {
      expect(operation.state).toBe('RUNNING');
      expect((await waitOperation(gw, operation.id, admin)).state).toBe('SUCCEEDED');
      expect((await gw.gql(READ, { id }, admin)).body.data.volume).toEqual(FREED);
    }
    expect(sim.requests().find((r) => r.method === 'DELETE')!.rawPath).toBe(
      '/v1/volume/csi/vol-000/detach?namespace=default&node=node-2222',
    );
  });

  it('should answer a detach RUNNING while Nomad has not freed the claim yet, and SUCCEEDED once it has, the volume agreeing at each step', async () => {
    const id = await stoppedClaim();
    sim.setVolumeWatcherPaused(true);
    const res = await gw.gql(DETACH, { id }, admin);
    expect(res.body.errors).toBeUndefined();
    expect(res.body.data.detachVolume).toMatchObject({ volume: HELD, operation: { state: 'RUNNING' } });
    const op = res.body.data.detachVolume.operation.id as string;
    // A check of the operation (one read of the volume) finds the claim still held: still RUNNING.
    const reads = (): number => calls(sim).filter((c) => c === 'GET /v1/volume/csi/vol-000').length;
    const before = reads();
    await until(() => reads() > before, 'a check of the operation');
    const read = async (): Promise<unknown> => (await gw.gql(READ_BOTH, { id, op }, admin)).body.data;
    expect(await read()).toEqual({ volume: HELD, volumeOperation: { state: 'RUNNING', backendStatus: HELD_STATUS } });
    sim.setVolumeWatcherPaused(false);
    expect(await waitOperation(gw, op, admin)).toMatchObject({ state: 'SUCCEEDED', backendStatus: FREED_STATUS });
    expect(await read()).toEqual({
      volume: FREED,
      volumeOperation: { state: 'SUCCEEDED', backendStatus: FREED_STATUS },
    });
  });

  it('should delete a volume in the provider, passing secrets in X-Nomad-CSI-Secrets', async () => {
    const id = (await gw.gql(`{ volumes { nodes { id } } }`, {}, admin)).body.data.volumes.nodes[0].id;
    const res = await gw.gql(
      `mutation($id: ID!) { deleteVolume(input: { volumeId: $id, secrets: [{ key: "kms", value: "abc" }] }) { deletedId } }`,
      { id },
      admin,
    );
    expect(res.body.errors).toBeUndefined();
    const del = sim.requests().find((r) => r.method === 'DELETE')!;
    expect(del.path).toBe('/v1/volume/csi/vol-000/delete');
    expect(del.headers['x-nomad-csi-secrets']).toBe('kms=abc');
    const ext = await gw.gql(
      `{ nomadExternalVolumes(backend: "east", plugin: "aws-ebs0") { nodes { externalId } } }`,
      {},
      admin,
    );
    expect(ext.body.data.nomadExternalVolumes.nodes.map((n: any) => n.externalId)).not.toContain('ext-default-vol-000');
  });

  it('should create, list and delete snapshots, and list external volumes page by page', async () => {
    const id = (await gw.gql(`{ volumes { nodes { id } } }`, {}, admin)).body.data.volumes.nodes[0].id;
    const made = await gw.gql(
      `mutation($id: ID!) { createVolumeSnapshot(input: { volumeId: $id, name: "nightly" }) { snapshot { id nativeId name sourceExternalVolumeId sizeBytes ready plugin { nativeId } } operation { kind state } } }`,
      { id },
      admin,
    );
    expect(made.body.errors).toBeUndefined();
    const snap = made.body.data.createVolumeSnapshot.snapshot;
    expect(snap).toMatchObject({
      name: 'nightly',
      sourceExternalVolumeId: 'ext-default-vol-000',
      plugin: { nativeId: 'aws-ebs0' },
    });
    expect(made.body.data.createVolumeSnapshot.operation).toEqual({ kind: 'CREATE_SNAPSHOT', state: 'SUCCEEDED' });
    const list = await gw.gql(
      `{ volumeSnapshots(backend: "east", filter: { plugin: "aws-ebs0" }) { nodes { id nativeId } } }`,
      {},
      admin,
    );
    expect(list.body.data.volumeSnapshots.nodes).toContainEqual({ id: snap.id, nativeId: snap.nativeId });
    const del = await gw.gql(
      `mutation($id: ID!) { deleteVolumeSnapshot(input: { snapshotId: $id }) { deletedId } }`,
      { id: snap.id },
      admin,
    );
    expect(del.body.errors).toBeUndefined();
    expect(sim.requests().find((r) => r.method === 'DELETE')!.query).toMatchObject({
      plugin_id: ['aws-ebs0'],
      snapshot_id: [snap.nativeId],
    });

    for (let i = 0; i < 4; i++)
      sim.addExternalVolume('aws-ebs0', { ExternalID: `vol-x${i}`, CapacityBytes: 1000 * (i + 1) });
    const seen: string[] = [];
    let after: string | null = null;
    for (let page = 0; page < 10; page++) {
      const r: any = await gw.gql(
        `query($a: String) { nomadExternalVolumes(backend: "east", plugin: "aws-ebs0", first: 2, after: $a) { nodes { externalId } pageInfo { hasNextPage endCursor } } }`,
        { a: after },
        admin,
      );
      expect(r.body.errors).toBeUndefined();
      seen.push(...r.body.data.nomadExternalVolumes.nodes.map((n: any) => n.externalId));
      if (!r.body.data.nomadExternalVolumes.pageInfo.hasNextPage) break;
      after = r.body.data.nomadExternalVolumes.pageInfo.endCursor;
    }
    expect(seen.sort()).toEqual(['ext-default-vol-000', 'vol-x0', 'vol-x1', 'vol-x2', 'vol-x3']);
  });

  it('should answer UNSUPPORTED_BY_BACKEND when the plugin cannot list volumes, and NOT_FOUND for an unknown plugin', async () => {
    sim.addPlugin({
      id: 'nolist',
      provider: 'x.csi',
      version: 'v1',
      controllerRequired: true,
      controllersHealthy: 1,
      nodesHealthy: 1,
      capabilities: { SupportsListVolumes: false },
    });
    const res = await gw.gql(
      `{ nomadExternalVolumes(backend: "east", plugin: "nolist") { nodes { externalId } } }`,
      {},
      admin,
    );
    expect(res.body.errors[0].extensions).toMatchObject({ code: 'UNSUPPORTED_BY_BACKEND', backend: 'east' });
    const unknown = await gw.gql(
      `{ nomadExternalVolumes(backend: "east", plugin: "ghost") { nodes { externalId } } }`,
      {},
      admin,
    );
    expect(unknown.body.errors[0].extensions).toMatchObject({ code: 'NOT_FOUND', backendMessage: 'no such plugin' });
  });
});
