/**
 * NomadBackend claims against the real Nomad simulator: attachment states, detach by node, the
 * refusals of attach, of non-node detach and of extend (and the merge path that does grow a
 * volume), and node claims with their call count.
 */
import { UnsupportedByBackendError } from '../../adapters/contract/errors';
import type { Attachment, Volume } from '../../adapters/contract/model';
import type { VolumeAllocationConsumer } from '../../adapters/nomad/model';
import {
  ANALYTICS_READ,
  NODE1,
  NODE2,
  rejection,
  seedVolume,
  startNomadBackend,
  type NomadUnderTest,
} from './nomad-helpers';
import { until } from '../support/until';

let t: NomadUnderTest;
afterEach(() => t.stop());

const GiB = 2 ** 30;
const read = async (id: string, ns = 'default'): Promise<Volume> => (await t.backend.getVolume(t.ref(id, ns), t.o))!;
const consumer = (a: Attachment): VolumeAllocationConsumer => a.consumer as VolumeAllocationConsumer;

describe('attachment states', () => {
  beforeEach(async () => {
    t = await startNomadBackend({ claimReleaseDelayMs: Infinity });
    seedVolume(t.sim, 'shared', 'default', {
      RequestedCapabilities: [{ AccessMode: 'multi-node-multi-writer', AttachmentMode: 'file-system' }],
    });
  });

  it('maps claims from their allocations, with a reason for ERROR', async () => {
    const pending = t.sim.placeAllocation({
      jobId: 'p',
      nodeId: NODE1,
      clientStatus: 'pending',
      volumes: [{ volumeId: 'shared', mode: 'write' }],
    });
    const lost = t.sim.placeAllocation({ jobId: 'l', nodeId: NODE2, volumes: [{ volumeId: 'shared', mode: 'read' }] });
    const gone = t.sim.placeAllocation({ jobId: 'g', nodeId: NODE2, volumes: [{ volumeId: 'shared', mode: 'write' }] });
    t.sim.setAllocationStatus(lost, { clientStatus: 'unknown' });
    t.sim.setAllocationStatus(gone, { clientStatus: 'complete', desiredStatus: 'stop' });
    t.sim.gcAllocation(gone);
    const byId = new Map((await read('shared')).attachments.map((a) => [a.consumerId, a]));
    expect(byId.get(pending)).toMatchObject({ state: 'ATTACHING', access: 'READ_WRITE', stateReason: null });
    expect(byId.get(lost)).toMatchObject({ state: 'ERROR', access: 'READ_ONLY', backendState: 'unknown' });
    expect(byId.get(lost)!.stateReason).toContain('node is disconnected');
    expect(byId.get(gone)).toMatchObject({
      state: 'DETACHING',
      backendState: null,
      consumer: { __typename: 'VolumeAllocationConsumer', allocationId: gone, nodeId: null },
    });
  });
});

describe('detach, attach and extend', () => {
  beforeEach(async () => {
    t = await startNomadBackend({ claimReleaseDelayMs: Infinity });
    seedVolume(t.sim, 'pg');
  });

  it('detaches by node: the stopped allocation’s claim is released', async () => {
    const alloc = t.sim.placeAllocation({ jobId: 'db', nodeId: NODE1, volumes: [{ volumeId: 'pg', mode: 'write' }] });
    t.sim.setAllocationStatus(alloc, { clientStatus: 'complete', desiredStatus: 'stop' });
    expect((await read('pg')).attachments.map((a) => a.state)).toEqual(['DETACHING']);
    t.sim.clearRequests();
    expect(await t.backend.detachVolume(t.ref('pg'), { kind: 'node', nodeId: NODE1 }, t.o)).toEqual({
      result: undefined,
      pending: null,
    });
    const sent = t.sim.requests()[0]!;
    expect([sent.method, sent.path, sent.query.node]).toEqual(['DELETE', '/v1/volume/csi/pg/detach', [NODE1]]);
    await until(async () => (await read('pg')).attachments.length === 0, "(await read('pg')).attachments.length === 0");
    expect((await read('pg')).status).toBe('AVAILABLE');
  });

  it('refuses detach targets other than a node, and attach, with the reason and no call', async () => {
    const server = await rejection(t.backend.detachVolume(t.ref('pg'), { kind: 'server', serverId: 's-1' }, t.o));
    expect(server).toBeInstanceOf(UnsupportedByBackendError);
    expect(server.message).toContain('client nodes only');
    const host = await rejection(
      t.backend.detachVolume(t.ref('pg'), { kind: 'hostAttachment', attachmentId: 'a-1' }, t.o),
    );
    expect(host).toBeInstanceOf(UnsupportedByBackendError);
    const attach = await rejection(t.backend.attachVolume(t.ref('pg'), { kind: 'server', serverId: 's-1' }, t.o));
    expect(attach).toBeInstanceOf(UnsupportedByBackendError);
    expect(attach.message).toContain(
      'claimed by allocations that the scheduler places; run a job that requests the volume',
    );
    expect(attach.toExtensions()).toMatchObject({ code: 'UNSUPPORTED_BY_BACKEND', backend: 'east' });
    expect(t.backend.capabilities.has('ATTACH_VOLUME')).toBe(false);
    expect(t.calls()).toEqual([]);
  });

  it('refuses extend (a re-put would erase stored secrets and mount options); the merge path it names grows the volume', async () => {
    const err = await rejection(t.backend.extendVolume(t.ref('pg'), 20 * GiB, t.o));
    expect(err).toBeInstanceOf(UnsupportedByBackendError);
    expect(err.message).toContain('create the volume again with its full specification and a larger capacityMinBytes');
    expect(t.backend.capabilities.has('EXTEND_VOLUME')).toBe(false);
    expect(t.calls()).toEqual([]);
    // The caller who holds the specification re-creates with a larger minimum: Nomad expands.
    await t.backend.createVolume(
      {
        namespace: 'default',
        name: 'pg name',
        capacityMinBytes: 20 * GiB,
        own: {
          nativeId: 'pg',
          plugin: 'aws-ebs0',
          capabilities: [{ accessMode: 'SINGLE_NODE_WRITER', attachmentMode: 'FILE_SYSTEM' }],
          mountOptions: { fsType: 'ext4', mountFlags: ['noatime'] },
          secrets: [{ key: 'password', value: 'hunter2-secret' }],
        },
      },
      t.o,
    );
    const v = await read('pg');
    expect(v.sizeBytes).toBe(20 * GiB);
    expect(
      (v.details as unknown as { full: { requestedCapacityMinBytes: number } }).full.requestedCapacityMinBytes,
    ).toBe(20 * GiB);
  });
});

describe('nodeClaims', () => {
  let pgAlloc: string;
  beforeEach(async () => {
    t = await startNomadBackend();
    seedVolume(t.sim, 'pg');
    seedVolume(t.sim, 'unused');
    seedVolume(t.sim, 'shared', 'default', {
      RequestedCapabilities: [{ AccessMode: 'multi-node-reader-only', AttachmentMode: 'file-system' }],
    });
    seedVolume(t.sim, 'lake', 'analytics');
    pgAlloc = t.sim.placeAllocation({
      jobId: 'db',
      nodeId: NODE1,
      volumes: [
        { volumeId: 'pg', mode: 'write' },
        { volumeId: 'shared', mode: 'read' },
      ],
    });
    t.sim.placeAllocation({ jobId: 'web', nodeId: NODE2, volumes: [{ volumeId: 'shared', mode: 'read' }] });
    t.sim.placeAllocation({
      jobId: 'etl',
      namespace: 'analytics',
      nodeId: NODE1,
      volumes: [{ volumeId: 'lake', mode: 'write' }],
    });
    t.sim.clearRequests();
  });

  it('costs one list in every namespace plus one read per volume found', async () => {
    const claims = await t.backend.listNodeAttachments([NODE1], t.o);
    const mine = claims.get(NODE1)!;
    expect(mine.map((a) => `${a.volume.namespace}/${a.volume.nativeId}:${a.access}`).sort()).toEqual([
      'analytics/lake:READ_WRITE',
      'default/pg:READ_WRITE',
      'default/shared:READ_ONLY',
    ]);
    expect(
      mine.every(
        (a) =>
          a.__typename === 'VolumeAttachment' &&
          consumer(a).__typename === 'VolumeAllocationConsumer' &&
          consumer(a).nodeId === NODE1,
      ),
    ).toBe(true);
    expect(mine.find((a) => a.volume.nativeId === 'pg')!.consumerId).toBe(pgAlloc);
    const [listCall, ...reads] = t.sim.requests();
    expect([listCall!.path, listCall!.query.node_id, listCall!.query.namespace]).toEqual([
      '/v1/volumes',
      [NODE1],
      ['*'],
    ]);
    expect(reads.map((r) => `${r.method} ${r.path}`).sort()).toEqual([
      'GET /v1/volume/csi/lake',
      'GET /v1/volume/csi/pg',
      'GET /v1/volume/csi/shared',
    ]);
  });

  it('reads a volume used on several asked nodes once and gives each node its own claims', async () => {
    const claims = await t.backend.listNodeAttachments([NODE1, NODE2, NODE1, 'node-none'], t.o);
    expect([...claims.keys()]).toEqual([NODE1, NODE2, 'node-none']);
    expect(claims.get(NODE1)).toHaveLength(3);
    expect(claims.get(NODE2)!.map((a) => [a.volume.nativeId, consumer(a).jobId])).toEqual([['shared', 'web']]);
    expect(claims.get('node-none')).toEqual([]);
    const lists = t.calls().filter((c) => c === 'GET /v1/volumes');
    const reads = t.calls().filter((c) => c.startsWith('GET /v1/volume/csi/'));
    expect(lists).toHaveLength(3);
    expect(reads).toHaveLength(3);
  });

  it('sees only the namespaces the caller may list', async () => {
    const claims = await t.backend.listNodeAttachments([NODE1], t.as(ANALYTICS_READ));
    expect(claims.get(NODE1)!.map((a) => a.volume.nativeId)).toEqual(['lake']);
    expect(t.calls()).toEqual(['GET /v1/volumes', 'GET /v1/volume/csi/lake']);
  });

  it('makes no call for no nodes', async () => {
    expect((await t.backend.listNodeAttachments([], t.o)).size).toBe(0);
    expect(t.calls()).toEqual([]);
  });
});
