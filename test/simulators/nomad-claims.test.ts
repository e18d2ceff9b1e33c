/**
 * Claim rules and the claim lifecycle (hashicorp/nomad nomad/structs/csi.go,
 * nomad/csi_endpoint.go): max claims per access mode, schedulability, attachment mode, modes set by
 * the first claim and reset by the last release, past claims counted while in flight, detach,
 * deregister with in-use volumes.
 */
import { ClaimError, NomadSimulator } from '../../simulators/nomad';
import { call, json, MGMT, NODE1, NODE2, startSim } from './nomad-helpers';
import { until } from '../support/until';

let sim: NomadSimulator;
let url: string;

const caps = (access: string, attachment = 'file-system'): Array<{ AccessMode: string; AttachmentMode: string }> => [
  { AccessMode: access, AttachmentMode: attachment },
];

async function setup(opts: ConstructorParameters<typeof NomadSimulator>[0] = {}): Promise<void> {
  ({ sim, url } = await startSim(opts));
  sim.seedVolume({
    ID: 'snw',
    PluginID: 'aws-ebs0',
    ExternalID: 'vol-snw',
    RequestedCapabilities: caps('single-node-writer'),
  });
  sim.seedVolume({
    ID: 'snr',
    PluginID: 'aws-ebs0',
    ExternalID: 'vol-snr',
    RequestedCapabilities: caps('single-node-reader-only'),
  });
  sim.seedVolume({
    ID: 'mnr',
    PluginID: 'aws-ebs0',
    ExternalID: 'vol-mnr',
    RequestedCapabilities: caps('multi-node-reader-only'),
  });
  sim.seedVolume({
    ID: 'mnmw',
    PluginID: 'hostpath',
    RequestedCapabilities: [...caps('multi-node-multi-writer'), ...caps('multi-node-multi-writer', 'block-device')],
  });
}

afterEach(async () => {
  await sim.close();
});

const vol = async (id: string): Promise<any> => json(await call(url, 'GET', `/v1/volume/csi/${id}`, { token: MGMT }));
const place = (
  volumeId: string,
  mode: 'read' | 'write',
  extra: { nodeId?: string; attachmentMode?: string; id?: string } = {},
): string =>
  sim.placeAllocation({
    jobId: 'job',
    nodeId: extra.nodeId ?? NODE1,
    ...(extra.id ? { id: extra.id } : {}),
    volumes: [{ volumeId, mode, ...(extra.attachmentMode ? { attachmentMode: extra.attachmentMode } : {}) }],
  });
const claimError = (fn: () => unknown): string => {
  try {
    fn();
  } catch (e) {
    if (e instanceof ClaimError) return e.message;
    throw e;
  }
  throw new Error('expected a ClaimError');
};

describe('claim rules', () => {
  beforeEach(() => setup());

  it('single-node-writer: one writer, then nothing else', async () => {
    place('snw', 'write');
    expect(claimError(() => place('snw', 'write'))).toBe('volume max claims reached');
    expect(claimError(() => place('snw', 'read'))).toBe('volume max claims reached');
    const v = await vol('snw');
    expect(v).toMatchObject({ AccessMode: 'single-node-writer', AttachmentMode: 'file-system' });
    expect(Object.keys(v.WriteAllocs)).toHaveLength(1);
  });

  it('single-node-reader-only: one reader, no writers', async () => {
    place('snr', 'read');
    expect(claimError(() => place('snr', 'read'))).toBe('volume max claims reached');
    expect(claimError(() => place('snr', 'write'))).toBe('volume is currently unschedulable');
  });

  it('multi-node modes allow many claims; a different attachment mode is rejected', async () => {
    place('mnr', 'read');
    place('mnr', 'read', { nodeId: NODE2 });
    expect((await vol('mnr')).Allocations).toHaveLength(2);
    place('mnmw', 'write');
    place('mnmw', 'write', { nodeId: NODE2 });
    expect(claimError(() => place('mnmw', 'write', { attachmentMode: 'block-device' }))).toBe(
      'cannot change attachment mode of claimed volume',
    );
  });

  it('unschedulable volumes reject claims; schedulability follows plugin health at read time', async () => {
    sim.setPluginHealth('aws-ebs0', { nodesHealthy: 0 });
    expect((await vol('snw')).Schedulable).toBe(false);
    expect(claimError(() => place('snw', 'write'))).toBe('volume is currently unschedulable');
    sim.setPluginHealth('aws-ebs0', { nodesHealthy: 2 });
    expect((await vol('snw')).Schedulable).toBe(true);
    place('snw', 'write');
  });

  it('is all or nothing across an allocation’s volumes', async () => {
    place('snw', 'write');
    expect(() =>
      sim.placeAllocation({
        jobId: 'x',
        nodeId: NODE2,
        volumes: [
          { volumeId: 'mnr', mode: 'read' },
          { volumeId: 'snw', mode: 'write' },
        ],
      }),
    ).toThrow(ClaimError);
    expect((await vol('mnr')).ReadAllocs).toEqual({});
    expect(
      claimError(() =>
        sim.placeAllocation({ jobId: 'x', nodeId: NODE1, volumes: [{ volumeId: 'ghost', mode: 'read' }] }),
      ),
    ).toBe('volume not found: ghost');
  });

  it('controller plugins publish the volume to the node in the provider', async () => {
    place('snw', 'write');
    const ext = json(await call(url, 'GET', '/v1/volumes/external?plugin_id=aws-ebs0', { token: MGMT }));
    const snw = ext.Volumes.find((v: { ExternalID: string }) => v.ExternalID === 'vol-snw');
    expect(snw.PublishedExternalNodeIDs).toHaveLength(1);
    expect(snw.PublishedExternalNodeIDs[0]).toMatch(/^i-[0-9a-f]{17}$/);
  });
});

describe('release', () => {
  it('keeps a terminal allocation’s claim as a past claim until released, then resets modes', async () => {
    await setup({ claimReleaseDelayMs: 150 });
    const id = place('snw', 'write');
    sim.setAllocationStatus(id, { clientStatus: 'complete' });
    await new Promise((r) => setTimeout(r, 40));
    const during = await vol('snw');
    expect(Object.keys(during.WriteAllocs)).toEqual([id]);
    expect(during.Allocations[0].ClientStatus).toBe('complete');
    expect(during.AccessMode).toBe('single-node-writer');
    // The claim still blocks new claims while it is being released.
    expect(claimError(() => place('snw', 'write', { nodeId: NODE2 }))).toBe('volume max claims reached');
    await until(
      async () => Object.keys((await vol('snw')).WriteAllocs).length === 0,
      "Object.keys((await vol('snw')).WriteAllocs).length === 0",
    );
    const after = await vol('snw');
    expect(after).toMatchObject({ AccessMode: '', AttachmentMode: '', Allocations: [] });
    const stub = json<any[]>(await call(url, 'GET', '/v1/volumes?type=csi&prefix=snw', { token: MGMT }))[0];
    expect(stub).toMatchObject({ CurrentWriters: 0, AccessMode: '' });
    place('snw', 'write', { nodeId: NODE2 });
  });

  it('with an infinite delay, DELETE …/detach?node= frees the node’s past claims', async () => {
    await setup({ claimReleaseDelayMs: Infinity });
    const id = place('snw', 'write');
    const live = place('mnr', 'read', { nodeId: NODE1 });
    sim.setAllocationStatus(id, { desiredStatus: 'stop', clientStatus: 'complete' });
    await new Promise((r) => setTimeout(r, 30));
    expect(Object.keys((await vol('snw')).WriteAllocs)).toEqual([id]);
    const other = await call(url, 'DELETE', `/v1/volume/csi/snw/detach?node=${NODE2}`, { token: MGMT });
    expect([other.status, other.text]).toEqual([200, '']);
    await new Promise((r) => setTimeout(r, 30));
    expect(Object.keys((await vol('snw')).WriteAllocs)).toEqual([id]);
    const r = await call(url, 'DELETE', `/v1/volume/csi/snw/detach?node=${NODE1}`, { token: MGMT });
    expect(r.status).toBe(200);
    expect(Number(r.headers['x-nomad-index'])).toBeGreaterThan(0);
    await until(
      async () => Object.keys((await vol('snw')).WriteAllocs).length === 0,
      "Object.keys((await vol('snw')).WriteAllocs).length === 0",
    );
    // A live allocation's claim on the same node is not touched by detach.
    await call(url, 'DELETE', `/v1/volume/csi/mnr/detach?node=${NODE1}`, { token: MGMT });
    await new Promise((r2) => setTimeout(r2, 30));
    expect(Object.keys((await vol('mnr')).ReadAllocs)).toEqual([live]);
  });

  it('detach frees only the named volume', async () => {
    await setup({ claimReleaseDelayMs: Infinity });
    const id = sim.placeAllocation({
      jobId: 'j',
      nodeId: NODE1,
      volumes: [
        { volumeId: 'snw', mode: 'write' },
        { volumeId: 'mnr', mode: 'read' },
      ],
    });
    sim.setAllocationStatus(id, { clientStatus: 'complete' });
    await new Promise((r) => setTimeout(r, 30));
    await call(url, 'DELETE', `/v1/volume/csi/snw/detach?node=${NODE1}`, { token: MGMT });
    await until(
      async () => Object.keys((await vol('snw')).WriteAllocs).length === 0,
      "Object.keys((await vol('snw')).WriteAllocs).length === 0",
    );
    expect(Object.keys((await vol('mnr')).ReadAllocs)).toEqual([id]);
  });

  it('a paused volume watcher holds the past claims a detach released until it resumes (control API)', async () => {
    await setup({ claimReleaseDelayMs: Infinity });
    const id = place('snw', 'write');
    sim.setAllocationStatus(id, { clientStatus: 'complete' });
    const watcher = (body: object): ReturnType<typeof call> => call(url, 'POST', '/_sim/volume-watcher', { body });
    expect((await watcher({ paused: 'yes' })).status).toBe(400);
    expect(json(await watcher({ paused: true }))).toEqual({ ok: true });
    const r = await call(url, 'DELETE', `/v1/volume/csi/snw/detach?node=${NODE1}`, { token: MGMT });
    expect(r.status).toBe(200);
    // The detach has answered; its free waits for the watcher.
    await new Promise((r2) => setTimeout(r2, 30));
    expect(Object.keys((await vol('snw')).WriteAllocs)).toEqual([id]);
    expect(json(await watcher({ paused: false }))).toEqual({ ok: true });
    expect(Object.keys((await vol('snw')).WriteAllocs)).toEqual([]);
  });

  it('a GC’d allocation leaves its claim as a key without a stub', async () => {
    await setup({ claimReleaseDelayMs: Infinity });
    const id = place('snw', 'write');
    sim.setAllocationStatus(id, { clientStatus: 'failed' });
    sim.gcAllocation(id);
    const v = await vol('snw');
    expect(v.WriteAllocs).toEqual({ [id]: null });
    expect(v.Allocations).toEqual([]);
    expect(() => sim.gcAllocation(id)).toThrow('allocation not found');
  });
});

describe('deregister with claims', () => {
  it('force succeeds only when every claiming allocation is terminal', async () => {
    await setup({ claimReleaseDelayMs: Infinity });
    const id = place('snw', 'write');
    const inUse = await call(url, 'DELETE', '/v1/volume/csi/snw?force=true', { token: MGMT });
    expect([inUse.status, inUse.text]).toEqual([500, 'volume in use: snw']);
    sim.setAllocationStatus(id, { clientStatus: 'lost' });
    expect((await call(url, 'DELETE', '/v1/volume/csi/snw', { token: MGMT })).text).toBe('volume in use: snw');
    const forced = await call(url, 'DELETE', '/v1/volume/csi/snw?force=1', { token: MGMT });
    expect([forced.status, forced.text]).toEqual([200, '']);
    expect((await call(url, 'GET', '/v1/volume/csi/snw', { token: MGMT })).status).toBe(404);
  });
});
