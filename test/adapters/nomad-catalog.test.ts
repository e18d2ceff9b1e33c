/**
 * NomadBackend beside volumes, against the real Nomad simulator: snapshots (v2 shapes), plugins,
 * provider (external) volumes, health, and what the backend offers (capabilities, guards,
 * anonymous access).
 */
import type { VolumeBackend } from '../../adapters/contract/backend';
import {
  BadUserInputError,
  NotFoundError,
  UnauthenticatedError,
  UnsupportedByBackendError,
} from '../../adapters/contract/errors';
import { BACKEND, rejection, seedVolume, startNomadBackend, type NomadUnderTest } from './nomad-helpers';

let t: NomadUnderTest;
afterEach(() => t.stop());

const GiB = 2 ** 30;

describe('snapshots', () => {
  beforeEach(async () => {
    t = await startNomadBackend();
    seedVolume(t.sim, 'pg');
    seedVolume(t.sim, 'web');
    t.sim.addSnapshot('aws-ebs0', {
      ID: 'snap-1',
      ExternalSourceVolumeID: 'vol-pg',
      SizeBytes: 10 * GiB,
      CreateTime: 1_700_000_000,
    });
    t.sim.addSnapshot('aws-ebs0', {
      ID: 'snap-2',
      ExternalSourceVolumeID: 'vol-web',
      SizeBytes: 10 * GiB,
      CreateTime: 1_700_000_100,
    });
    t.sim.addSnapshot('aws-ebs0', {
      ID: 'snap-3',
      ExternalSourceVolumeID: 'vol-pg',
      SizeBytes: 10 * GiB,
      CreateTime: 1_700_000_200,
    });
  });

  const query = (
    q: Partial<Parameters<NomadUnderTest['backend']['listSnapshots']>[0]> = {},
    plugin: string | null = 'aws-ebs0',
  ) => ({ own: { filter: { plugin }, secrets: [] }, limit: 10, token: null, ...q });

  it('lists a plugin’s snapshots, scoped by plugin, paged by the plugin’s token', async () => {
    const all = await t.backend.listSnapshots(query(), t.o);
    expect(all.items.map((s) => s.nativeId)).toEqual(['snap-1', 'snap-2', 'snap-3']);
    expect(all.items[0]).toEqual({
      __typename: 'VolumeSnapshot',
      backend: BACKEND,
      scope: 'aws-ebs0',
      nativeId: 'snap-1',
      name: null,
      pluginId: 'aws-ebs0',
      sourceExternalVolumeId: 'vol-pg',
      sourceVolume: null,
      sizeBytes: 10 * GiB,
      createdAt: '2023-11-14T22:13:20.000Z',
      ready: true,
      backendStatus: null,
      description: null,
    });
    const first = await t.backend.listSnapshots(query({ limit: 2 }), t.o);
    expect(first.items).toHaveLength(2);
    expect(first.next).not.toBeNull();
    const rest = await t.backend.listSnapshots(query({ limit: 2, token: first.next }), t.o);
    expect(rest.items.map((s) => s.nativeId)).toEqual(['snap-3']);
    expect(rest.next).toBeNull();
  });

  it('lists one volume’s snapshots: the plugin defaults to the volume’s, one read first', async () => {
    t.sim.clearRequests();
    const page = await t.backend.listSnapshots(query({ volume: t.ref('pg') }, null), t.o);
    expect(page.items.map((s) => [s.nativeId, s.sourceVolume])).toEqual([
      ['snap-1', t.ref('pg')],
      ['snap-3', t.ref('pg')],
    ]);
    expect(t.calls()).toEqual(['GET /v1/volume/csi/pg', 'GET /v1/volumes/snapshot']);
    expect(await rejection(t.backend.listSnapshots(query({ volume: t.ref('ghost') }, null), t.o))).toBeInstanceOf(
      NotFoundError,
    );
  });

  it('refuses a list without a plugin, and answers why a plugin without snapshots cannot list', async () => {
    const none = await rejection(t.backend.listSnapshots(query({}, null), t.o));
    expect(none).toBeInstanceOf(BadUserInputError);
    expect(none).toMatchObject({
      field: 'filter.plugin',
      argument: 'filter.plugin',
      message: 'Nomad lists snapshots per plugin: name the plugin (filter.plugin)',
    });
    expect(await rejection(t.backend.listSnapshots(query({}, 'hostpath'), t.o))).toBeInstanceOf(
      UnsupportedByBackendError,
    );
  });

  it('creates a snapshot: reads the volume’s plugin first (the reply names none) and fills what the reply lacks', async () => {
    t.sim.clearRequests();
    const made = await t.backend.createSnapshot(
      { volume: t.ref('web'), name: 'nightly', own: { secrets: [{ key: 'k', value: 'v' }] } },
      t.o,
    );
    expect(made.pending).toBeNull();
    expect(made.result).toMatchObject({
      __typename: 'VolumeSnapshot',
      scope: 'aws-ebs0',
      pluginId: 'aws-ebs0',
      name: 'nightly',
      sourceExternalVolumeId: 'vol-web',
      sourceVolume: t.ref('web'),
      sizeBytes: 10 * GiB,
    });
    expect(t.calls()).toEqual(['GET /v1/volume/csi/web', 'POST /v1/volumes/snapshot']);
    const body = JSON.parse(t.sim.requests()[1]!.body);
    expect(body.Snapshots[0]).toMatchObject({
      SourceVolumeID: 'web',
      PluginID: 'aws-ebs0',
      Name: 'nightly',
      Secrets: { k: 'v' },
    });
    // With the plugin given, no read.
    t.sim.clearRequests();
    await t.backend.createSnapshot({ volume: t.ref('web'), name: 'again', own: { plugin: 'aws-ebs0' } }, t.o);
    expect(t.calls()).toEqual(['POST /v1/volumes/snapshot']);
  });

  it('refuses what Nomad snapshots do not have, before any call, and a missing volume before the write', async () => {
    expect(
      await rejection(t.backend.createSnapshot({ volume: t.ref('web'), name: 'n', description: 'd' }, t.o)),
    ).toMatchObject({ field: 'description' });
    expect(
      await rejection(t.backend.createSnapshot({ volume: t.ref('web'), name: 'n', own: { force: true } }, t.o)),
    ).toMatchObject({ field: 'force' });
    expect(t.calls()).toEqual([]);
    expect(await rejection(t.backend.createSnapshot({ volume: t.ref('ghost'), name: 'n' }, t.o))).toBeInstanceOf(
      NotFoundError,
    );
    expect(t.calls()).toEqual(['GET /v1/volume/csi/ghost']);
  });

  it('deletes by SnapshotRef (scope = plugin) with the secrets in the header', async () => {
    await t.backend.deleteSnapshot(
      { backend: BACKEND, scope: 'aws-ebs0', nativeId: 'snap-2' },
      { own: { secrets: [{ key: 'k', value: 'v' }] } },
      t.o,
    );
    const del = t.sim.requests().at(-1)!;
    expect([del.method, del.query.plugin_id, del.query.snapshot_id, del.headers['x-nomad-csi-secrets']]).toEqual([
      'DELETE',
      ['aws-ebs0'],
      ['snap-2'],
      'k=v',
    ]);
    expect((await t.backend.listSnapshots(query(), t.o)).items.map((s) => s.nativeId)).toEqual(['snap-1', 'snap-3']);
  });
});

describe('plugins and provider volumes', () => {
  beforeEach(async () => {
    t = await startNomadBackend();
    t.sim.addExternalVolume('aws-ebs0', {
      ExternalID: 'vol-a',
      CapacityBytes: 5 * GiB,
      PublishedExternalNodeIDs: ['i-1'],
    });
    t.sim.addExternalVolume('aws-ebs0', {
      ExternalID: 'vol-b',
      CapacityBytes: GiB,
      IsAbnormal: true,
      Status: 'degraded',
    });
  });

  it('lists plugin stubs and reads one in full; unknown → null', async () => {
    const plugins = await t.backend.listPlugins(t.o);
    expect(plugins.map((p) => p.nativeId)).toEqual(['aws-ebs0', 'hostpath']);
    expect(plugins[0]).toEqual({
      __typename: 'StoragePlugin',
      backend: BACKEND,
      nativeId: 'aws-ebs0',
      provider: 'ebs.csi.aws.com',
      controllerRequired: true,
      controllers: { healthy: 1, expected: 1 },
      nodes: { healthy: 2, expected: 2 },
    });
    const ebs = (await t.backend.getPlugin('aws-ebs0', t.o))!;
    expect(ebs.__typename).toBe('StoragePlugin');
    expect(ebs.detail!.version).toBe('v1.38.1');
    expect(ebs.detail!.controllerFeatures).toEqual(
      expect.arrayContaining(['CREATE_DELETE', 'EXPAND', 'LIST_SNAPSHOTS']),
    );
    expect(ebs.detail!.controllerFeatures).not.toContain('GET_CAPACITY');
    expect(
      ebs
        .detail!.instances.filter((i) => i.role === 'NODE')
        .map((i) => i.nodeId)
        .sort(),
    ).toEqual(['node-1111', 'node-2222']);
    expect(ebs.detail!.instances.find((i) => i.role === 'NODE')!.accessibleTopology).toEqual({
      segments: [{ key: 'topology.ebs.csi.aws.com/zone', value: 'us-east-1a' }],
    });
    expect(await t.backend.getPlugin('nope', t.o)).toBeNull();
  });

  it('lists provider volumes with the plugin’s token from the body', async () => {
    const first = await t.backend.listExternalVolumes(
      { pluginId: 'aws-ebs0', namespace: 'default', limit: 1, token: null },
      t.o,
    );
    expect(first.items).toEqual([
      {
        __typename: 'NomadExternalVolume',
        backend: BACKEND,
        pluginId: 'aws-ebs0',
        externalId: 'vol-a',
        sizeBytes: 5 * GiB,
        context: [],
        cloneId: null,
        snapshotId: null,
        publishedNodeIds: ['i-1'],
        abnormal: false,
        condition: null,
      },
    ]);
    expect(first.next).not.toBeNull();
    const rest = await t.backend.listExternalVolumes(
      { pluginId: 'aws-ebs0', namespace: 'default', limit: 1, token: first.next },
      t.o,
    );
    expect(rest.items.map((v) => [v.externalId, v.abnormal, v.condition])).toEqual([['vol-b', true, 'degraded']]);
  });
});

describe('what the backend offers', () => {
  it('has the facets it implements and no others, and advertises what they and its core do', async () => {
    t = await startNomadBackend();
    const b: VolumeBackend = t.backend;
    expect([
      !!b.registration,
      !!b.storagePlugins,
      !!b.nodeAttachments,
      !!b.trackedChanges,
      !!b.watching,
      !!b.subscriberAccess,
      !!b.diagnosis,
    ]).toEqual([true, true, true, true, true, true, true]);
    expect([
      !!b.volumeActions,
      !!b.volumeUpdates,
      !!b.snapshotReads,
      !!b.hostAttachments,
      !!b.serverAttachments,
    ]).toEqual([false, false, false, false, false]);
    expect([...b.capabilities].sort()).toEqual([
      'CREATE_SNAPSHOT',
      'CREATE_VOLUME',
      'DELETE_SNAPSHOT',
      'DELETE_VOLUME',
      'DETACH_VOLUME',
      'LIST_EXTERNAL_VOLUMES',
      'LIST_PLUGINS',
      'LIST_SNAPSHOTS',
      'LIST_VOLUMES',
      'READ_VOLUME',
      'REGISTER_VOLUME',
      'TRACKED_OPERATIONS',
      'VOLUME_DIAGNOSIS',
    ]);
    expect(await b.health()).toMatchObject({ status: 'UP', message: null });
  });

  it('needs no credential where the anonymous policy allows reads', async () => {
    t = await startNomadBackend({ acl: { enabled: true, anonymousRead: ['default'] } });
    seedVolume(t.sim, 'pg');
    expect(t.backend.requiresCredential).toBe(false);
    expect((await t.backend.getVolume(t.ref('pg'), t.as()))!.complete).toBe(true);
    expect(await rejection(t.backend.getVolume(t.ref('x', 'analytics'), t.as()))).toBeInstanceOf(UnauthenticatedError);
  });
});
