/**
 * The memory backend against the contract, called directly: paging order, batch reads with a value
 * or an error per ref, not found → null, the advertised capabilities against the facets, access
 * checked on every call (UNAUTHENTICATED, FORBIDDEN), and host attachments, extend, update,
 * snapshots and deletes through their in-between statuses.
 */
import type { VolumeBackend } from '../../adapters/contract/backend';
import type { CallOptions } from '../../adapters/contract/call-options';
import type { Facet } from '../../adapters/contract/capabilities';
import {
  ConflictError,
  ForbiddenError,
  NotFoundError,
  UnauthenticatedError,
  UnsupportedByBackendError,
} from '../../adapters/contract/errors';
import type { Volume, VolumeRef } from '../../adapters/contract/model';
import { MemoryBackend } from '../../adapters/memory/backend';

const as = (token?: string): CallOptions => ({ credential: { token } });
const ADMIN = as('lab-admin');
const ref = (namespace: string, nativeId: string): VolumeRef => ({ backend: 'lab', namespace, nativeId });
const host = (name: string) => ({ kind: 'host' as const, connector: { host: name } });

describe('memory backend: reads', () => {
  const b = new MemoryBackend({
    backend: 'lab',
    source: { generate: { volumes: 25, attachmentsPerVolume: 2, namespaces: ['a', 'b'] } },
    operationDelayMs: 0,
  });

  it('should page every volume once, in (namespace, id) order, resuming at an item position', async () => {
    const seen: Volume[] = [];
    let token: string | null = null;
    do {
      const page = await b.listVolumes({ namespace: '*', limit: 7, token }, as());
      expect(page.items.length).toBeLessThanOrEqual(7);
      seen.push(...page.items.map((p) => p.item));
      token = page.next;
    } while (token !== null);
    const keys = seen.map((v) => `${v.ref.namespace}/${v.ref.nativeId}`);
    expect(keys).toHaveLength(25);
    expect(keys).toEqual([...keys].sort());
    expect(new Set(keys).size).toBe(25);
    const page = await b.listVolumes({ namespace: '*', limit: 3, token: null }, as());
    const resumed = await b.listVolumes({ namespace: '*', limit: 2, token: page.items[1]!.position }, as());
    expect(resumed.items.map((p) => p.item.ref.nativeId)).toEqual([
      page.items[1]!.item.ref.nativeId,
      page.items[2]!.item.ref.nativeId,
    ]);
  });

  it('should filter by namespace, exact name and the host a volume is attached to', async () => {
    const inA = await b.listVolumes({ namespace: 'a', limit: 100, token: null }, as());
    expect(inA.items).toHaveLength(13);
    expect(inA.items.every((p) => p.item.ref.namespace === 'a')).toBe(true);
    const named = await b.listVolumes({ namespace: '*', name: 'volume 3', limit: 100, token: null }, as());
    expect(named.items.map((p) => p.item.ref.nativeId)).toEqual(['vol-0003']);
    const onHost = await b.listVolumes({ namespace: '*', node: 'host-05', limit: 100, token: null }, as());
    expect(onHost.items.map((p) => p.item.ref.nativeId).sort()).toEqual(['vol-0004', 'vol-0005']);
    // A plugin is another kind's notion: no memory volume has one, so a listing by plugin finds none.
    expect(
      (await b.listVolumes({ namespace: '*', limit: 100, token: null, own: { filter: { plugin: 'aws-ebs0' } } }, as()))
        .items,
    ).toEqual([]);
    expect(
      (await b.listVolumes({ namespace: '*', limit: 100, token: null, own: { filter: { plugin: null } } }, as())).items,
    ).toHaveLength(25);
  });

  it('should read full volumes with attachments and details, null when absent, one value per ref in order', async () => {
    const v = (await b.getVolume(ref('b', 'vol-0001'), as()))!;
    expect(v).toMatchObject({
      complete: true,
      status: 'IN_USE',
      backendStatus: 'in_use',
      sizeBytes: 2 * 10 * 1024 ** 3,
      details: { __typename: 'MemoryVolumeDetails', snapshotCount: 0, metadata: [{ key: 'tier', value: 'silver' }] },
    });
    expect(v.attachments.map((a) => [a.consumerId, a.state, a.access, a.consumer])).toEqual([
      [
        'vol-0001-att-0',
        'ATTACHED',
        'READ_WRITE',
        { __typename: 'VolumeHostConsumer', hostName: 'host-01', nodeId: 'host-01' },
      ],
      [
        'vol-0001-att-1',
        'ATTACHED',
        'READ_ONLY',
        { __typename: 'VolumeHostConsumer', hostName: 'host-02', nodeId: 'host-02' },
      ],
    ]);
    expect(await b.getVolume(ref('b', 'nope'), as())).toBeNull();
    const batch = await b.getVolumes([ref('a', 'vol-0002'), ref('a', 'nope'), ref('b', 'vol-0001')], as());
    expect(batch.map((x) => (x && !(x instanceof Error) ? x.ref.nativeId : x))).toEqual(['vol-0002', null, 'vol-0001']);
  });

  it('should have the facets of a volume store with tracked changes and a live view, and advertise what they give', () => {
    const facets: Facet[] = [
      'volumeUpdates',
      'snapshotReads',
      'registration',
      'storagePlugins',
      'nodeAttachments',
      'volumeActions',
      'hostAttachments',
      'serverAttachments',
      'trackedChanges',
      'watching',
      'subscriberAccess',
      'diagnosis',
    ];
    expect(facets.filter((f) => (b as VolumeBackend)[f] !== undefined)).toEqual([
      'volumeUpdates',
      'snapshotReads',
      'trackedChanges',
      'watching',
      'subscriberAccess',
      'diagnosis',
    ]);
    expect([...b.capabilities]).toEqual([
      'LIST_VOLUMES',
      'READ_VOLUME',
      'CREATE_VOLUME',
      'DELETE_VOLUME',
      'ATTACH_VOLUME',
      'DETACH_VOLUME',
      'EXTEND_VOLUME',
      'UPDATE_VOLUME',
      'LIST_SNAPSHOTS',
      'READ_SNAPSHOT',
      'CREATE_SNAPSHOT',
      'DELETE_SNAPSHOT',
      'TRACKED_OPERATIONS',
      'VOLUME_DIAGNOSIS',
    ]);
    expect(b.kind).toBe('MEMORY');
  });
});

describe('memory backend: access from the tokens in its data', () => {
  const b = new MemoryBackend({ backend: 'lab', operationDelayMs: 0 });

  it('should need a token when tokens are declared, and refuse an unknown one as UNAUTHENTICATED', async () => {
    expect(b.requiresCredential).toBe(true);
    await expect(b.listVolumes({ namespace: '*', limit: 10, token: null }, as())).rejects.toBeInstanceOf(
      UnauthenticatedError,
    );
    await expect(b.getVolume(ref('default', 'pg-data'), as('made-up'))).rejects.toMatchObject({
      code: 'UNAUTHENTICATED',
      backend: 'lab',
    });
    await expect(b.checkCredential(as('made-up'))).rejects.toBeInstanceOf(UnauthenticatedError);
    await expect(b.checkCredential(as())).resolves.toBeUndefined();
  });

  it('should refuse outside the grants as FORBIDDEN, list only granted namespaces, and tell onAnswer', async () => {
    const answers: number[] = [];
    const viewer: CallOptions = { credential: { token: 'lab-viewer' }, onAnswer: (s) => answers.push(s) };
    const seen = await b.listVolumes({ namespace: '*', limit: 100, token: null }, viewer);
    expect(new Set(seen.items.map((p) => p.item.ref.namespace))).toEqual(new Set(['default']));
    await expect(b.getVolume(ref('dev', 'dev-cache'), viewer)).rejects.toBeInstanceOf(ForbiddenError);
    expect(answers).toContain(403);
    const batch = await b.getVolumes([ref('default', 'scratch'), ref('dev', 'dev-cache')], viewer);
    expect((batch[0] as Volume).ref.nativeId).toBe('scratch');
    expect(batch[1]).toBeInstanceOf(ForbiddenError);
    // Reads, but no writes, where the grant is read-only.
    await expect(b.extendVolume(ref('default', 'scratch'), 20 * 1024 ** 3, viewer)).rejects.toMatchObject({
      code: 'FORBIDDEN',
    });
    const dev = as('lab-dev');
    await expect(b.extendVolume(ref('default', 'scratch'), 20 * 1024 ** 3, dev)).rejects.toBeInstanceOf(ForbiddenError);
    await expect(b.extendVolume(ref('dev', 'dev-cache'), 6 * 1024 ** 3, dev)).resolves.toEqual({
      result: undefined,
      pending: null,
    });
    expect(await b.checkAccess('dev', ref('dev', 'dev-cache'), viewer)).toMatchObject({ allowed: false, admin: false });
    expect(await b.checkAccess('dev', ref('dev', 'dev-cache'), ADMIN)).toMatchObject({ allowed: true, admin: true });
  });

  it('should refuse an expired token and admit anonymous callers only to anonymous grants', async () => {
    const m = new MemoryBackend({
      backend: 'lab',
      operationDelayMs: 0,
      source: {
        data: {
          volumes: [
            { namespace: 'pub', id: 'v1', name: 'open', sizeBytes: 1 },
            { namespace: 'priv', id: 'v2', name: 'closed', sizeBytes: 1 },
          ],
          tokens: [{ token: 'old', grants: [{ namespace: '*' }], expiresAt: '2020-01-01T00:00:00Z' }],
          anonymous: [{ namespace: 'pub' }],
        },
      },
    });
    expect(m.requiresCredential).toBe(false);
    await expect(m.getVolume(ref('pub', 'v1'), as('old'))).rejects.toThrow(/expired/);
    expect((await m.getVolume(ref('pub', 'v1'), as()))?.name).toBe('open');
    await expect(m.getVolume(ref('priv', 'v2'), as())).rejects.toBeInstanceOf(ForbiddenError);
  });
});

describe('memory backend: changes', () => {
  it('should create, attach to hosts, detach, extend, update and delete, refusing what the state forbids', async () => {
    const b = new MemoryBackend({ backend: 'lab', operationDelayMs: 0 });
    const created = await b.createVolume(
      {
        namespace: 'dev',
        nativeId: 'new-1',
        name: 'new',
        capacityMinBytes: 1024,
        metadata: [{ key: 'k', value: 'v' }],
      },
      ADMIN,
    );
    expect(created).toEqual({ result: ref('dev', 'new-1'), pending: null });
    await expect(b.createVolume({ namespace: 'dev', nativeId: 'new-1', name: 'again' }, ADMIN)).rejects.toBeInstanceOf(
      ConflictError,
    );
    const att = await b.attachVolume(ref('dev', 'new-1'), host('h1'), ADMIN);
    expect(att.result).toMatchObject({ state: 'ATTACHED', consumer: { hostName: 'h1' }, access: 'READ_WRITE' });
    await expect(b.attachVolume(ref('dev', 'new-1'), host('h1'), ADMIN)).rejects.toBeInstanceOf(ConflictError);
    await expect(b.attachVolume(ref('dev', 'new-1'), { kind: 'server', serverId: 's1' }, ADMIN)).rejects.toBeInstanceOf(
      UnsupportedByBackendError,
    );
    expect((await b.getVolume(ref('dev', 'new-1'), ADMIN))!.status).toBe('IN_USE');
    await expect(b.deleteVolume(ref('dev', 'new-1'), {}, ADMIN)).rejects.toThrow(/attached/);
    await expect(
      b.detachVolume(ref('dev', 'new-1'), { kind: 'hostAttachment', attachmentId: 'nope' }, ADMIN),
    ).rejects.toBeInstanceOf(NotFoundError);
    await b.detachVolume(ref('dev', 'new-1'), { kind: 'hostAttachment', attachmentId: att.result!.consumerId }, ADMIN);
    await b.extendVolume(ref('dev', 'new-1'), 4096, ADMIN);
    await expect(b.extendVolume(ref('dev', 'new-1'), 4096, ADMIN)).rejects.toMatchObject({ code: 'BAD_USER_INPUT' });
    const updated = await b.updateVolume(ref('dev', 'new-1'), { name: 'renamed', description: 'd' }, ADMIN);
    expect(updated).toMatchObject({
      name: 'renamed',
      sizeBytes: 4096,
      status: 'AVAILABLE',
      attachments: [],
      details: { description: 'd', metadata: [{ key: 'k', value: 'v' }] },
    });
    const snap = await b.createSnapshot({ volume: ref('dev', 'new-1'), name: 's' }, ADMIN);
    expect(snap.result).toMatchObject({ ready: true, sourceVolume: ref('dev', 'new-1'), sizeBytes: 4096 });
    expect((await b.getVolume(ref('dev', 'new-1'), ADMIN))!.details).toMatchObject({ snapshotCount: 1 });
    await expect(b.deleteVolume(ref('dev', 'new-1'), {}, ADMIN)).rejects.toThrow(/snapshot/);
    await b.deleteVolume(ref('dev', 'new-1'), { own: { cascade: true } }, ADMIN);
    expect(await b.getVolume(ref('dev', 'new-1'), ADMIN)).toBeNull();
    expect(await b.getSnapshot({ backend: 'lab', scope: 'dev', nativeId: snap.result.nativeId }, ADMIN)).toBeNull();
  });

  it('should list snapshots per volume and page them', async () => {
    const b = new MemoryBackend({
      backend: 'lab',
      operationDelayMs: 0,
      source: { generate: { volumes: 3, attachmentsPerVolume: 0, snapshotsPerVolume: 3 } },
    });
    const ofOne = await b.listSnapshots({ volume: ref('default', 'vol-0001'), limit: 10, token: null }, as());
    expect(ofOne.items.map((s) => s.nativeId)).toEqual(['vol-0001-snap-0', 'vol-0001-snap-1', 'vol-0001-snap-2']);
    const first = await b.listSnapshots({ limit: 4, token: null }, as());
    const rest = await b.listSnapshots({ limit: 10, token: first.next }, as());
    expect(first.items.length + rest.items.length).toBe(9);
    expect(rest.next).toBeNull();
  });
});
