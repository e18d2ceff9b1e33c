/**
 * NomadBackend volumes against the real Nomad simulator: list stubs vs full reads, getVolumes,
 * create, register, deregister and delete.
 */
import { BadUserInputError, ConflictError, ForbiddenError } from '../../adapters/contract/errors';
import type { Volume } from '../../adapters/contract/model';
import type { NomadVolumeDetails, VolumeAllocationConsumer } from '../../adapters/nomad/model';
import { ANALYTICS_READ, NODE1, rejection, seedVolume, startNomadBackend, type NomadUnderTest } from './nomad-helpers';
import { underArgument } from '../../resolvers/input-fields';

let t: NomadUnderTest;
afterEach(() => t.stop());

const nomad = (v: Volume): NomadVolumeDetails => v.details as NomadVolumeDetails;
const GiB = 2 ** 30;
const list = (q: Partial<Parameters<NomadUnderTest['backend']['listVolumes']>[0]> = {}) =>
  t.backend.listVolumes({ namespace: '*', limit: 50, token: null, ...q }, t.o);

describe('list stubs and full reads', () => {
  beforeEach(async () => {
    t = await startNomadBackend();
    seedVolume(t.sim, 'pg');
    seedVolume(t.sim, 'web');
    seedVolume(t.sim, 'lake', 'analytics', {
      PluginID: 'hostpath',
      ExternalID: '',
      Capacity: 0,
      RequestedCapacityMin: 0,
    });
    t.sim.placeAllocation({ jobId: 'db', nodeId: NODE1, volumes: [{ volumeId: 'pg', mode: 'write' }] });
  });

  it('maps list stubs to incomplete volumes: no size, no attachments, details.full null', async () => {
    const page = await list();
    expect(page.items.map((i) => i.position)).toEqual(['analytics.lake', 'default.pg', 'default.web']);
    const pg = page.items[1]!.item;
    expect(pg).toMatchObject({
      __typename: 'Volume',
      ref: { backend: 'east', namespace: 'default', nativeId: 'pg' },
      name: 'pg name',
      status: 'IN_USE',
      backendStatus: 'readers=0 writers=1 schedulable=true',
      sizeBytes: null,
      complete: false,
      attachments: [],
    });
    expect(nomad(pg)).toMatchObject({
      __typename: 'NomadVolumeDetails',
      externalId: 'vol-pg',
      pluginId: 'aws-ebs0',
      currentWriters: 1,
      accessMode: 'SINGLE_NODE_WRITER',
      full: null,
    });
    expect(page.items[2]!.item.status).toBe('AVAILABLE');
    expect(t.calls()).toEqual(['GET /v1/volumes']);
  });

  it('maps a full read to a complete volume with its claims, size and the full details', async () => {
    const pg = (await t.backend.getVolume(t.ref('pg'), t.o))!;
    expect(pg).toMatchObject({ __typename: 'Volume', complete: true, sizeBytes: 10 * GiB, status: 'IN_USE' });
    expect(pg.attachments).toHaveLength(1);
    expect(pg.attachments[0]).toMatchObject({
      __typename: 'VolumeAttachment',
      volume: t.ref('pg'),
      state: 'ATTACHED',
      backendState: 'running',
      stateReason: null,
      access: 'READ_WRITE',
      consumer: {
        __typename: 'VolumeAllocationConsumer',
        jobId: 'db',
        nodeId: NODE1,
        nodeName: 'client-1',
        clientStatus: 'running',
      },
    });
    expect(pg.attachments[0]!.consumerId).toBe((pg.attachments[0]!.consumer as VolumeAllocationConsumer).allocationId);
    const full = nomad(pg).full!;
    expect(full).toMatchObject({
      requestedCapacityMinBytes: 10 * GiB,
      requestedCapacityMaxBytes: null,
      requestedCapabilities: [{ accessMode: 'SINGLE_NODE_WRITER', attachmentMode: 'FILE_SYSTEM' }],
      providerVersion: 'v1.38.1',
      mountOptions: { fsType: 'ext4', mountFlags: ['[REDACTED]'] },
    });
    expect(JSON.stringify(pg)).not.toContain('hunter2');
    // Same status, counts and times as the stub: a volume looks the same in a list and a read.
    const stub = (await list()).items[1]!.item;
    expect({
      status: stub.status,
      backendStatus: stub.backendStatus,
      createdAt: stub.createdAt,
      updatedAt: stub.updatedAt,
    }).toEqual({
      status: pg.status,
      backendStatus: pg.backendStatus,
      createdAt: pg.createdAt,
      updatedAt: pg.updatedAt,
    });
    const lake = (await t.backend.getVolume(t.ref('lake', 'analytics'), t.o))!;
    expect(lake).toMatchObject({ complete: true, sizeBytes: null, attachments: [] });
    expect(nomad(lake)).toMatchObject({ externalId: null, controllerRequired: false });
  });

  it('answers null for an unknown volume', async () => {
    expect(await t.backend.getVolume(t.ref('ghost'), t.o)).toBeNull();
  });

  it('pages with Nomad tokens and filters by name, plugin and node', async () => {
    const first = await list({ limit: 2 });
    expect(first.items).toHaveLength(2);
    expect(first.next).toBe('default.web');
    expect((await list({ limit: 2, token: first.next })).items.map((i) => i.item.ref.nativeId)).toEqual(['web']);
    expect((await list({ name: 'web name' })).items.map((i) => i.item.ref.nativeId)).toEqual(['web']);
    t.sim.clearRequests();
    expect((await list({ own: { filter: { plugin: 'hostpath' } } })).items.map((i) => i.item.ref.nativeId)).toEqual([
      'lake',
    ]);
    expect((await list({ namespace: 'analytics', own: { filter: { plugin: 'hostpath' } } })).items).toHaveLength(1);
    const [across, inOne] = t.sim.requests();
    // plugin_id with namespace=* answers [] on a real Nomad: a filter term instead.
    expect(across!.query).toMatchObject({ namespace: ['*'], filter: ['PluginID == `hostpath`'] });
    expect(inOne!.query).toMatchObject({ namespace: ['analytics'], plugin_id: ['hostpath'] });
    expect((await list({ node: NODE1 })).items.map((i) => i.item.ref.nativeId)).toEqual(['pg']);
  });
});

describe('getVolumes', () => {
  beforeEach(async () => {
    t = await startNomadBackend();
    for (const id of ['a', 'b', 'c', 'd', 'e']) seedVolume(t.sim, id);
    seedVolume(t.sim, 'x', 'analytics');
  });

  it('reads each volume once, in order, with null for missing and an Error where a read fails', async () => {
    const refs = [t.ref('a'), t.ref('ghost'), t.ref('x', 'analytics'), t.ref('b')];
    const out = await t.backend.getVolumes(refs, t.as(ANALYTICS_READ), 4);
    expect(out[0]).toBeInstanceOf(ForbiddenError);
    expect(out[1]).toBeInstanceOf(ForbiddenError);
    expect((out[2] as Volume).ref.nativeId).toBe('x');
    expect(out[3]).toBeInstanceOf(ForbiddenError);
    const mine = await t.backend.getVolumes(refs, t.o, 4);
    expect(mine.map((v) => (v === null ? null : (v as Volume).ref.nativeId))).toEqual(['a', null, 'x', 'b']);
    expect(t.calls().filter((c) => c.startsWith('GET /v1/volume/csi/'))).toHaveLength(8);
  });

  it('keeps at most `concurrency` reads in flight', async () => {
    t.sim.setLatency(80);
    let most = 0;
    const watch = setInterval(() => (most = Math.max(most, t.sim.requests().filter((r) => r.status === 0).length)), 5);
    const out = await t.backend.getVolumes(
      ['a', 'b', 'c', 'd', 'e'].map((id) => t.ref(id)),
      t.o,
      2,
    );
    clearInterval(watch);
    expect(out.every((v) => (v as Volume).complete)).toBe(true);
    expect(most).toBe(2);
    expect(t.calls()).toHaveLength(5);
  });
});

describe('create, register, deregister, delete', () => {
  beforeEach(async () => {
    t = await startNomadBackend();
  });

  // Nomad's own part as a caller gives it: a create's `nomad` part, or a register input's fields.
  const spec = (nativeId: string, nomad: Record<string, unknown> = {}) => ({
    namespace: 'default',
    name: `${nativeId} name`,
    own: {
      nativeId,
      plugin: 'aws-ebs0',
      capabilities: [{ accessMode: 'SINGLE_NODE_WRITER' as const, attachmentMode: 'FILE_SYSTEM' as const }],
      ...nomad,
    },
  });

  it('creates a volume in the provider with the capacity range in bytes', async () => {
    const made = await t.backend.createVolume(
      {
        ...spec('new', { secrets: [{ key: 'k', value: 'v' }], parameters: [{ key: 'type', value: 'gp3' }] }),
        capacityMinBytes: 2 * GiB,
        capacityMaxBytes: 4 * GiB,
      },
      t.o,
    );
    expect(made).toEqual({ result: t.ref('new'), pending: null });
    const body = JSON.parse(t.sim.requests()[0]!.body);
    expect(body.Volumes[0]).toMatchObject({
      ID: 'new',
      PluginID: 'aws-ebs0',
      RequestedCapacityMin: 2 * GiB,
      RequestedCapacityMax: 4 * GiB,
      Secrets: { k: 'v' },
      Parameters: { type: 'gp3' },
    });
    expect(body.Volumes[0].RequestedCapabilities).toEqual([
      { AccessMode: 'single-node-writer', AttachmentMode: 'file-system' },
    ]);
    const v = (await t.backend.getVolume(t.ref('new'), t.o))!;
    expect(v.sizeBytes).toBe(2 * GiB);
    expect(nomad(v).externalId).toMatch(/^vol-[0-9a-f]{17}$/);
    expect(nomad(v).full!.parameters).toEqual([{ key: 'type', value: 'gp3' }]);
  });

  it('refuses specs Nomad cannot take before any call', async () => {
    const cases: Array<[Parameters<NomadUnderTest['backend']['createVolume']>[0], string]> = [
      [{ namespace: 'default', name: 'x' }, 'nomad'],
      [spec('x', { nativeId: '' }), 'nomad.nativeId'],
      [spec('x', { plugin: 'a/b' }), 'nomad.plugin'],
      [{ ...spec('x'), description: 'd' }, 'description'],
      [spec('x', { externalId: 'vol-1' }), 'nomad.externalId'],
      [spec('x', { capabilities: [] }), 'nomad.capabilities'],
      [spec('x', { parameters: [{ key: 'k', value: 'v'.repeat(2000) }] }), 'nomad.parameters[0].value'],
      [{ ...spec('x'), capacityMinBytes: 1.5 }, 'sizeBytes'],
      [{ ...spec('x'), capacityMinBytes: 2 * GiB, capacityMaxBytes: GiB }, 'maxSizeBytes'],
      [spec('x', { secrets: [{ key: 'a,b', value: 'v' }] }), 'nomad.secrets[0].key'],
    ];
    // Fields are named relative to the input Nomad was given, never as GraphQL argument paths.
    for (const [s, field] of cases) {
      const err = await rejection(t.backend.createVolume(s, t.o));
      expect(err).toBeInstanceOf(BadUserInputError);
      expect(err).toMatchObject({ field, argument: field });
      expect(err.placed(underArgument('input')).argument).toBe(`input.${field}`);
    }
    const register = await rejection(t.backend.registerVolume(spec('x'), t.o));
    expect(register).toMatchObject({
      field: 'externalId',
      message: 'registering needs the provider volume id (externalId)',
    });
    expect(register.placed(underArgument('input')).message).toBe(
      'registering needs the provider volume id (input.externalId)',
    );
    expect(t.calls()).toEqual([]);
  });

  it('registers a provider volume, deregisters it (the provider keeps it) and refuses in-use ones', async () => {
    t.sim.addExternalVolume('aws-ebs0', { ExternalID: 'vol-orphan', CapacityBytes: 5 * GiB });
    expect(await t.backend.registerVolume(spec('adopted', { externalId: 'vol-orphan' }), t.o)).toEqual(
      t.ref('adopted'),
    );
    const v = (await t.backend.getVolume(t.ref('adopted'), t.o))!;
    expect(nomad(v)).toMatchObject({ externalId: 'vol-orphan', pluginId: 'aws-ebs0' });
    const alloc = t.sim.placeAllocation({
      jobId: 'j',
      nodeId: NODE1,
      volumes: [{ volumeId: 'adopted', mode: 'write' }],
    });
    expect(await rejection(t.backend.deregisterVolume(t.ref('adopted'), false, t.o))).toBeInstanceOf(ConflictError);
    t.sim.setAllocationStatus(alloc, { clientStatus: 'complete', desiredStatus: 'stop' });
    await t.backend.deregisterVolume(t.ref('adopted'), true, t.o);
    expect(t.sim.requests().at(-1)!.query.force).toEqual(['true']);
    expect(await t.backend.getVolume(t.ref('adopted'), t.o)).toBeNull();
    const external = await t.backend.listExternalVolumes(
      { pluginId: 'aws-ebs0', namespace: 'default', limit: 10, token: null },
      t.o,
    );
    expect(external.items.map((e) => e.externalId)).toContain('vol-orphan');
  });

  it('deletes from the provider with the caller’s secrets in the header, never in the query', async () => {
    seedVolume(t.sim, 'doomed');
    expect(
      await t.backend.deleteVolume(t.ref('doomed'), { own: { secrets: [{ key: 'token', value: 's3cret' }] } }, t.o),
    ).toEqual({ result: undefined, pending: null });
    const del = t.sim.requests().at(-1)!;
    expect(`${del.method} ${del.path}`).toBe('DELETE /v1/volume/csi/doomed/delete');
    expect(del.headers['x-nomad-csi-secrets']).toBe('token=s3cret');
    expect(del.rawPath).not.toContain('s3cret');
    expect(await t.backend.getVolume(t.ref('doomed'), t.o)).toBeNull();
    const external = await t.backend.listExternalVolumes(
      { pluginId: 'aws-ebs0', namespace: 'default', limit: 10, token: null },
      t.o,
    );
    expect(external.items.map((e) => e.externalId)).not.toContain('vol-doomed');
    expect(
      await rejection(t.backend.deleteVolume(t.ref('x'), { own: { secrets: [], cascade: true } }, t.o)),
    ).toMatchObject({ field: 'cascade' });
  });
});
