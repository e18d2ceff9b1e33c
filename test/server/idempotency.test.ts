/**
 * Idempotency keys on creating mutations (and, on OpenStack, on every other state-changing one), over
 * HTTP against the Nomad and OpenStack simulators, with keys in the process and in a real
 * redis-server: a retry with the same key makes no second backend create (counted in the simulators'
 * request logs) and answers the first result; keys are scoped to the caller; a key reused for
 * another input, or while its first request runs, is refused; a failed create frees its key.
 * Replicas sharing Redis, Redis down and the Redis store itself are in idempotency-replicas.test.ts.
 */
import { Redis } from 'ioredis';
import type { NomadSimulator } from '../../simulators/nomad';
import {
  ANALYTICS_WRITE,
  MGMT,
  disposeAll,
  seedVolumes,
  startGatewayFor,
  startNomad,
  startOpenStack,
  type GatewayUnderTest,
  type OpenStackUnderTest,
} from '../support/harness';
import { startRedisServer, stopRedisServers, type RedisServerUnderTest } from '../support/redis';
import { until } from '../support/until';
import { count, CREATE, failure, finalState, sleep } from './idempotency-helpers';

const SNAPSHOT =
  'mutation($i: CreateVolumeSnapshotInput!) { createVolumeSnapshot(input: $i) { snapshot { id name } operation { id kind } } }';
const ATTACH =
  'mutation($i: AttachVolumeInput!) { attachVolume(input: $i) { attachment { id state } operation { id kind } } }';
const BY_NATIVE_ID =
  'query($b: ID!, $ns: String, $n: String!) { volumeByNativeId(backend: $b, namespace: $ns, nativeId: $n) { id } }';
const CAPABILITIES = [{ accessMode: 'SINGLE_NODE_WRITER', attachmentMode: 'FILE_SYSTEM' }];

describe('idempotency keys on Nomad', () => {
  let sim: NomadSimulator;
  let gw: GatewayUnderTest;
  const admin = { 'x-nomad-token': MGMT };
  const input = (nativeId: string, key: string, over: Record<string, unknown> = {}) => ({
    backend: 'east',
    namespace: 'analytics',
    name: nativeId,
    nomad: { nativeId, plugin: 'aws-ebs0', capabilities: CAPABILITIES },
    idempotencyKey: key,
    ...over,
  });
  const creates = (nativeId: string): number => count(sim.requests(), 'PUT', `/v1/volume/csi/${nativeId}/create`);

  beforeAll(async () => {
    sim = await startNomad();
    seedVolumes(sim, 1);
    gw = await startGatewayFor([{ id: 'east', url: sim.url }]);
  });
  afterAll(disposeAll);

  it('should create once for a key sent twice, answering the same volume and operation', async () => {
    const first = await gw.gql(CREATE, { i: input('idem-1', 'key-1') }, admin);
    expect(first.body.errors).toBeUndefined();
    const again = await gw.gql(CREATE, { i: input('idem-1', 'key-1') }, admin);
    expect(again.body).toEqual(first.body);
    expect(first.body.data.createVolume.operation).toEqual({ id: expect.any(String), kind: 'CREATE_VOLUME' });
    expect(creates('idem-1')).toBe(1);
  });

  it('should refuse the key with another input (IDEMPOTENCY_KEY_REUSED) before any backend call', async () => {
    expect((await gw.gql(CREATE, { i: input('idem-2', 'key-2') }, admin)).body.errors).toBeUndefined();
    sim.clearRequests();
    const reused = await gw.gql(CREATE, { i: input('idem-2', 'key-2', { name: 'another name' }) }, admin);
    expect(failure(reused)).toEqual({ code: 'IDEMPOTENCY_KEY_REUSED', retryable: false });
    expect(reused.body.errors[0].message).toContain('input.idempotencyKey');
    expect(sim.requests()).toEqual([]);
  });

  it('should scope keys to the caller: another token with the same key creates on its own', async () => {
    const mine = await gw.gql(CREATE, { i: input('scoped-a', 'shared-key') }, admin);
    const theirs = await gw.gql(CREATE, { i: input('scoped-b', 'shared-key') }, { 'x-nomad-token': ANALYTICS_WRITE });
    expect(theirs.body.errors).toBeUndefined();
    expect(theirs.body.data.createVolume.volume.id).not.toBe(mine.body.data.createVolume.volume.id);
    expect([creates('scoped-a'), creates('scoped-b')]).toEqual([1, 1]);
    // The same input under the first caller's key is another request of the first caller: refused.
    expect(failure(await gw.gql(CREATE, { i: input('scoped-b', 'shared-key') }, admin)).code).toBe(
      'IDEMPOTENCY_KEY_REUSED',
    );
  });

  it('should snapshot once for a key sent twice (createVolumeSnapshot)', async () => {
    const volumeId = (await gw.gql(BY_NATIVE_ID, { b: 'east', n: 'vol-000' }, admin)).body.data.volumeByNativeId.id;
    const i = { volumeId, name: 'nightly', idempotencyKey: 'snap-1' };
    const first = await gw.gql(SNAPSHOT, { i }, admin);
    expect(first.body.errors).toBeUndefined();
    expect(first.body.data.createVolumeSnapshot.operation.kind).toBe('CREATE_SNAPSHOT');
    expect((await gw.gql(SNAPSHOT, { i }, admin)).body).toEqual(first.body);
    expect(count(sim.requests(), 'POST', '/v1/volumes/snapshot')).toBe(1);
    // Without a key, the same request snapshots again.
    const unkeyed = await gw.gql(SNAPSHOT, { i: { volumeId, name: 'nightly' } }, admin);
    expect(unkeyed.body.data.createVolumeSnapshot.snapshot.id).not.toBe(
      first.body.data.createVolumeSnapshot.snapshot.id,
    );
    expect(count(sim.requests(), 'POST', '/v1/volumes/snapshot')).toBe(2);
  });
});

describe.each(['memory', 'redis'])('idempotency keys on OpenStack, kept in %s', (where) => {
  let os: OpenStackUnderTest;
  let gw: GatewayUnderTest;
  let auth: Record<string, string>;
  let redis: RedisServerUnderTest | undefined;
  const cinder = (method: string, suffix: string): number =>
    count(
      os.sim.requests().filter((r) => r.service === 'cinder'),
      method,
      suffix,
    );
  const input = (name: string, key: string) => ({ backend: 'os', name, sizeGiB: 1, idempotencyKey: key });

  beforeAll(async () => {
    redis = where === 'redis' ? await startRedisServer() : undefined;
    os = await startOpenStack({ delays: { createMs: 30, snapshotMs: 30, attachMs: 10, attachCompleteMs: 10 } });
    gw = await startGatewayFor([os.backend('os')], {
      operationOptions: { pollMs: 20, maxPollMs: 50 },
      redis: redis && { url: redis.url, keyPrefix: 'idem:' },
    });
    auth = { 'x-auth-token': os.demoToken };
  });
  beforeEach(() => os.sim.clearRequests());
  afterAll(async () => {
    await disposeAll();
    await stopRedisServers();
  });

  it('should create once for a key sent twice, answering the same volume and operation', async () => {
    const first = await gw.gql(CREATE, { i: input('once', 'os-key-1') }, auth);
    expect(first.body.errors).toBeUndefined();
    const again = await gw.gql(CREATE, { i: input('once', 'os-key-1') }, auth);
    expect(again.body.errors).toBeUndefined();
    expect(again.body.data.createVolume.volume.id).toBe(first.body.data.createVolume.volume.id);
    expect(again.body.data.createVolume.operation).toEqual(first.body.data.createVolume.operation);
    expect(cinder('POST', '/volumes')).toBe(1);
    if (redis) {
      // The key is Redis's, not this process's.
      const probe = new Redis(redis.url);
      expect(await probe.keys('idem:{live}:idempotency:*').finally(() => probe.quit())).toHaveLength(1);
    }
  });

  it('should refuse the key with another input (IDEMPOTENCY_KEY_REUSED) before any backend call', async () => {
    const first = await gw.gql(CREATE, { i: input('reused', 'os-key-2') }, auth);
    // Once the first create's poller is done, any request the simulator sees is the refused one's.
    expect(await finalState(gw, first.body.data.createVolume.operation.id, auth)).toBe('SUCCEEDED');
    os.sim.clearRequests();
    expect(failure(await gw.gql(CREATE, { i: { ...input('reused', 'os-key-2'), sizeGiB: 2 } }, auth)).code).toBe(
      'IDEMPOTENCY_KEY_REUSED',
    );
    expect(os.sim.requests()).toEqual([]);
  });

  it("should scope keys to the caller: another project's caller with the same key and input creates its own", async () => {
    const mine = await gw.gql(CREATE, { i: input('per-caller', 'os-key-3') }, auth);
    const theirs = await gw.gql(CREATE, { i: input('per-caller', 'os-key-3') }, { 'x-auth-token': os.otherToken });
    expect(theirs.body.errors).toBeUndefined();
    expect([mine.body.data.createVolume.volume.namespace, theirs.body.data.createVolume.volume.namespace]).toEqual([
      os.demo,
      os.other,
    ]);
    expect(theirs.body.data.createVolume.operation.id).not.toBe(mine.body.data.createVolume.operation.id);
    expect(cinder('POST', '/volumes')).toBe(2);
  });

  it('should answer a duplicate that arrives while the first still runs with CONFLICT (retryable), then the first result', async () => {
    os.sim.setLatency(500, 'cinder');
    let first: Promise<{ body: any }>;
    try {
      first = gw.gql(CREATE, { i: input('slow', 'os-key-4') }, auth);
      for (let i = 0; i < 200 && cinder('POST', '/volumes') === 0; i++) await sleep(10);
      expect(os.sim.requests().find((r) => r.method === 'POST' && r.path.endsWith('/volumes'))?.status).toBe(0);
      expect(failure(await gw.gql(CREATE, { i: input('slow', 'os-key-4') }, auth))).toMatchObject({
        code: 'CONFLICT',
        retryable: true,
      });
      expect((await first).body.errors).toBeUndefined();
    } finally {
      os.sim.setLatency(0, 'cinder');
    }
    const retry = await gw.gql(CREATE, { i: input('slow', 'os-key-4') }, auth);
    expect(retry.body.data.createVolume.operation.id).toBe((await first).body.data.createVolume.operation.id);
    expect(cinder('POST', '/volumes')).toBe(1);
  });

  it('should free the key of a create the backend refused, so the retry creates', async () => {
    os.sim.setQuota(os.demo, { volumes: 0 });
    try {
      expect(failure(await gw.gql(CREATE, { i: input('refused-first', 'os-key-5') }, auth)).code).toBe(
        'QUOTA_EXCEEDED',
      );
    } finally {
      os.sim.setQuota(os.demo, null);
    }
    const retry = await gw.gql(CREATE, { i: input('refused-first', 'os-key-5') }, auth);
    expect(retry.body.errors).toBeUndefined();
    expect(retry.body.data.createVolume.volume.name).toBe('refused-first');
    expect(cinder('POST', '/volumes')).toBe(2);
  });

  it('should keep answering a create that Cinder accepted and then failed with its FAILED operation', async () => {
    os.sim.failNextCreate('fails-later');
    const first = await gw.gql(CREATE, { i: input('fails-later', 'os-key-6') }, auth);
    expect(await finalState(gw, first.body.data.createVolume.operation.id, auth)).toBe('FAILED');
    const retry = await gw.gql(CREATE, { i: input('fails-later', 'os-key-6') }, auth);
    expect(retry.body.data.createVolume.operation).toEqual(first.body.data.createVolume.operation);
    expect(cinder('POST', '/volumes')).toBe(1);
  });

  it('should snapshot once for a key sent twice (createVolumeSnapshot)', async () => {
    const vid = os.sim.seedVolume({ project: os.demo, name: 'snap-source', size: 1 });
    const volumeId = (await gw.gql(BY_NATIVE_ID, { b: 'os', ns: os.demo, n: vid }, auth)).body.data.volumeByNativeId.id;
    const i = { volumeId, name: 'before-upgrade', idempotencyKey: 'os-snap-1' };
    const first = await gw.gql(SNAPSHOT, { i }, auth);
    expect(first.body.errors).toBeUndefined();
    expect((await gw.gql(SNAPSHOT, { i }, auth)).body).toEqual(first.body);
    expect(cinder('POST', '/snapshots')).toBe(1);
  });

  it('should attach a host once for a key sent twice (attachVolume)', async () => {
    const vid = os.sim.seedVolume({ project: os.demo, name: 'host-data', size: 1 });
    const volumeId = (await gw.gql(BY_NATIVE_ID, { b: 'os', ns: os.demo, n: vid }, auth)).body.data.volumeByNativeId.id;
    const i = {
      volumeId,
      target: { host: { connector: { host: 'bm-7', initiator: 'iqn.1993-08.org.debian:01:bm7', ip: '10.0.0.7' } } },
      idempotencyKey: 'os-attach-1',
    };
    const first = await gw.gql(ATTACH, { i }, auth);
    expect(first.body.errors).toBeUndefined();
    expect(first.body.data.attachVolume.attachment).toEqual({ id: expect.any(String), state: 'ATTACHED' });
    const again = await gw.gql(ATTACH, { i }, auth);
    expect(again.body.errors).toBeUndefined();
    expect(again.body.data.attachVolume.attachment.id).toBe(first.body.data.attachVolume.attachment.id);
    expect(again.body.data.attachVolume.operation).toEqual(first.body.data.attachVolume.operation);
    expect(cinder('POST', '/attachments')).toBe(1);
  });

  it('should extend, reserve, unreserve, detach and delete once each for a key sent twice (every state-changing mutation takes one)', async () => {
    const vid = os.sim.seedVolume({ project: os.demo, name: 'keyed-changes', size: 1 });
    const volumeId = (await gw.gql(BY_NATIVE_ID, { b: 'os', ns: os.demo, n: vid }, auth)).body.data.volumeByNativeId.id;
    const twice = async (query: string, i: Record<string, unknown>): Promise<any> => {
      const first = await gw.gql(query, { i }, auth);
      expect(first.body.errors).toBeUndefined();
      expect((await gw.gql(query, { i }, auth)).body).toEqual(first.body);
      return first.body.data;
    };
    const actions = (): number => cinder('POST', `/volumes/${vid}/action`);
    const settled = (size: number) => () =>
      os.sim.volume(vid)?.status === 'available' && os.sim.volume(vid)?.size === size;
    await twice('mutation($i: ExtendVolumeInput!) { extendVolume(input: $i) { operation { id kind } } }', {
      volumeId,
      newSizeGiB: 2,
      idempotencyKey: 'os-extend-1',
    });
    expect(actions()).toBe(1);
    await until(settled(2), 'the extend to finish');
    await twice('mutation($i: CinderVolumeInput!) { reserveCinderVolume(input: $i) { operation { id kind } } }', {
      volumeId,
      idempotencyKey: 'os-reserve-1',
    });
    await twice('mutation($i: CinderVolumeInput!) { unreserveCinderVolume(input: $i) { operation { id kind } } }', {
      volumeId,
      idempotencyKey: 'os-unreserve-1',
    });
    expect(actions()).toBe(3);
    const attached = await gw.gql(ATTACH, { i: { volumeId, target: { host: { connector: { host: 'bm-8' } } } } }, auth);
    expect(attached.body.errors).toBeUndefined();
    await twice('mutation($i: DetachVolumeInput!) { detachVolume(input: $i) { operation { id kind } } }', {
      volumeId,
      target: { host: { hostAttachmentId: attached.body.data.attachVolume.attachment.id } },
      idempotencyKey: 'os-detach-1',
    });
    expect(
      os.sim
        .requests()
        .filter((r) => r.service === 'cinder' && r.method === 'DELETE' && r.path.includes('/attachments/')).length,
    ).toBe(1);
    await until(settled(2), 'the detach to finish');
    await twice('mutation($i: DeleteVolumeInput!) { deleteVolume(input: $i) { deletedId operation { id kind } } }', {
      volumeId,
      idempotencyKey: 'os-delete-1',
    });
    expect(cinder('DELETE', `/volumes/${vid}`)).toBe(1);
  });
});
