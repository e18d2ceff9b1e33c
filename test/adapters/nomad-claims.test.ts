/**
 * NomadBackend claims against the real Nomad simulator: attachment states, detach by node and
 * its completion rule (the claims Nomad's volume watcher frees after the answer), the refusals of attach, of non-node detach and of extend (and the merge path that does grow a
 * volume), and node claims with their call count.
 */
import type { ChangeCheck, CompletionRule } from '../../adapters/contract/completion';
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
const check = (rule: CompletionRule): Promise<ChangeCheck> => t.backend.checkChange(rule, t.o);

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

  it('detaches by node: the stopped allocation’s claim is released, pending only while Nomad still lists it', async () => {
    const alloc = t.sim.placeAllocation({ jobId: 'db', nodeId: NODE1, volumes: [{ volumeId: 'pg', mode: 'write' }] });
    t.sim.setAllocationStatus(alloc, { clientStatus: 'complete', desiredStatus: 'stop' });
    expect((await read('pg')).attachments.map((a) => a.state)).toEqual(['DETACHING']);
    t.sim.clearRequests();
    const accepted = await t.backend.detachVolume(t.ref('pg'), { kind: 'node', nodeId: NODE1 }, t.o);
    // The DELETE, then one read: done at once when the volume watcher has freed the claim already.
    expect(t.calls()).toEqual(['DELETE /v1/volume/csi/pg/detach', 'GET /v1/volume/csi/pg']);
    expect(t.sim.requests()[0]!.query.node).toEqual([NODE1]);
    if (accepted.pending === null) expect((await read('pg')).attachments).toEqual([]);
    else await until(async () => (await check(accepted.pending!.rule)).progress.state === 'SUCCEEDED', 'freed');
    await until(async () => (await read('pg')).attachments.length === 0, "(await read('pg')).attachments.length === 0");
    expect((await read('pg')).status).toBe('AVAILABLE');
  });

  it('leaves a detach pending, started, while Nomad has not freed the claims it released, and waits for those only', async () => {
    seedVolume(t.sim, 'shared', 'default', {
      RequestedCapabilities: [{ AccessMode: 'multi-node-multi-writer', AttachmentMode: 'file-system' }],
    });
    const place = (nodeId: string): string =>
      t.sim.placeAllocation({ jobId: 'j', nodeId, volumes: [{ volumeId: 'shared', mode: 'write' }] });
    const [stopped, collected, live, elsewhere] = [place(NODE1), place(NODE1), place(NODE1), place(NODE2)];
    for (const a of [stopped, collected, elsewhere]) t.sim.setAllocationStatus(a, { clientStatus: 'complete' });
    t.sim.gcAllocation(collected);
    t.sim.setVolumeWatcherPaused(true);
    const accepted = await t.backend.detachVolume(t.ref('shared'), { kind: 'node', nodeId: NODE1 }, t.o);
    expect(accepted.pending).toEqual({
      rule: {
        name: 'claimsFreed',
        params: { volumeId: 'shared', namespace: 'default', nodeId: NODE1 },
        seen: { claims: JSON.stringify([stopped, collected]) },
      },
      started: { backendStatus: 'readers=0 writers=4 schedulable=true' },
    });
    const rule = JSON.parse(JSON.stringify(accepted.pending!.rule)) as CompletionRule;
    t.sim.clearRequests();
    expect((await check(rule)).progress).toEqual({
      state: 'RUNNING',
      backendStatus: 'readers=0 writers=4 schedulable=true',
    });
    expect(t.calls()).toEqual(['GET /v1/volume/csi/shared']);
    t.sim.setVolumeWatcherPaused(false);
    // Freed: the other node's stopped allocation and the live one still hold theirs.
    expect(await check(rule)).toEqual({
      progress: { state: 'SUCCEEDED', backendStatus: 'readers=0 writers=2 schedulable=true' },
      seen: rule.seen,
    });
    expect((await read('shared')).attachments.map((a) => a.consumerId).sort()).toEqual([live, elsewhere].sort());
  });

  it('follows a detach whose read after the answer failed transiently, not one whose read failed for good; knows no other rule', async () => {
    const alloc = t.sim.placeAllocation({ jobId: 'db', nodeId: NODE1, volumes: [{ volumeId: 'pg', mode: 'write' }] });
    t.sim.setAllocationStatus(alloc, { clientStatus: 'complete' });
    t.sim.setVolumeWatcherPaused(true);
    t.sim.failNext({ count: 1, status: 503, body: 'No cluster leader', method: 'GET' });
    const transient = await t.backend.detachVolume(t.ref('pg'), { kind: 'node', nodeId: NODE1 }, t.o);
    // The claims to wait for are then the first check's.
    expect(transient.pending).toEqual({ rule: { ...transient.pending!.rule, seen: {} } });
    expect(await check(transient.pending!.rule)).toEqual({
      progress: { state: 'RUNNING', backendStatus: 'readers=0 writers=1 schedulable=true' },
      seen: { claims: JSON.stringify([alloc]) },
    });
    // A read that fails for good (Nomad's plain 500) leaves the detach as Nomad answered it: done.
    t.sim.failNext({ count: 1, status: 500, body: 'unexpected state', method: 'GET' });
    const broken = await t.backend.detachVolume(t.ref('pg'), { kind: 'node', nodeId: NODE1 }, t.o);
    expect(broken).toEqual({ result: undefined, pending: null });
    t.sim.clearRequests();
    expect(await check({ name: 'volumeGone', params: {}, seen: {} })).toMatchObject({
      progress: { state: 'FAILED', reason: 'the gateway has no completion rule "volumeGone"' },
    });
    expect(t.calls()).toEqual([]);
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
