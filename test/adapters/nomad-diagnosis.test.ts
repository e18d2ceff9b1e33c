/**
 * The Nomad backend's `diagnosis` facet against the Nomad simulator over HTTP: each kind found with
 * its evidence and remedies, the cases that are never a problem, and a problem that ends when its
 * condition does. The doctor's context is the test's own (the engine is the core's): a clock, the
 * gateway's running operations and the first-seen memory the contract describes.
 */
import { decodeGlobalId } from '../../adapters/contract/ids';
import type { DiagnosisContext, Finding, PluginEvidence } from '../../adapters/contract/diagnosis';
import type { Volume, VolumeRef } from '../../adapters/contract/model';
import type { NomadDiagnosisFacts } from '../../adapters/nomad/diagnosis';
import type { VolumeAllocationConsumer } from '../../adapters/nomad/model';
import { contractFixture } from '../../adapters/nomad/testing/contract-fixture';
import { disposeAll } from '../support/harness';
import { until } from '../support/until';
import { NODE1, NODE2, seedVolume, startNomadBackend, type NomadUnderTest } from './nomad-helpers';

/** The contract's context, kept across passes as the doctor keeps it. */
class TestContext implements DiagnosisContext {
  now = Date.now();
  /** How far ahead of the wall clock the passes run (a test's way to let time pass). */
  ahead = 0;
  running = new Set<string>();
  #seen = new Map<string, number>();
  #asked = new Set<string>();

  operationRunning(ref: VolumeRef): boolean {
    return this.running.has(ref.nativeId);
  }

  firstSeen(ref: VolumeRef, condition: string): number {
    const key = `${ref.nativeId}\u0000${condition}`;
    this.#asked.add(key);
    if (!this.#seen.has(key)) this.#seen.set(key, this.now);
    return this.#seen.get(key)!;
  }

  /** Starts a pass: its clock. */
  beginPass(): void {
    this.now = Date.now() + this.ahead;
  }

  /** Ends a pass: forgets what it did not ask. */
  endPass(): void {
    for (const k of [...this.#seen.keys()]) if (!this.#asked.has(k)) this.#seen.delete(k);
    this.#asked.clear();
  }
}

let t: NomadUnderTest;
let ctx: TestContext;

let running: NomadUnderTest | null = null;

async function start(thresholds = { stuckClaimMs: 0, missingPluginMs: 0 }): Promise<void> {
  t = running = await startNomadBackend({ claimReleaseDelayMs: 0 }, { diagnosis: thresholds });
  ctx = new TestContext();
}

afterEach(async () => {
  await running?.stop();
  running = null;
});

const facet = () => t.backend.diagnosis;
const read = async (id: string): Promise<Volume> => (await t.backend.getVolume(t.ref(id), t.o))!;
const facts = (): Promise<NomadDiagnosisFacts> => facet().readFacts!(t.o);
/** One pass over one volume, as the doctor runs it: read facts, check the view's volume. */
async function check(id: string, f: NomadDiagnosisFacts | null = null): Promise<Finding[]> {
  const volume = await read(id);
  const known = f ?? (await facts());
  ctx.beginPass();
  const out = facet().checkVolume(volume, known, ctx);
  ctx.endPass();
  return out;
}
const kinds = (fs: Finding[]): string[] => fs.map((f) => `${f.kind}/${f.severity}/${f.subject}`);
const place = (id: string, nodeId = NODE1, mode: 'read' | 'write' = 'write'): string =>
  t.sim.placeAllocation({ jobId: `job-${id}`, nodeId, volumes: [{ volumeId: id, mode }] });
const settle = (): Promise<void> => new Promise((r) => setTimeout(r, 50));

describe('the facet', () => {
  beforeEach(() => start());

  it('should advertise VOLUME_DIAGNOSIS with its two kinds', () => {
    expect(t.backend.capabilities.has('VOLUME_DIAGNOSIS')).toBe(true);
    expect(facet().kinds).toEqual(['STUCK_CLAIM', 'CLAIM_ON_MISSING_PLUGIN']);
  });

  it('should read the plugin list once per pass, and a plugin only while some instance is unhealthy', async () => {
    t.sim.clearRequests();
    const healthy = await facts();
    expect(t.calls()).toEqual(['GET /v1/plugins']);
    expect(healthy.plugins.get('aws-ebs0')!.nodeInstances).toBeNull();

    t.sim.setNodePluginHealth('aws-ebs0', NODE2, false);
    t.sim.clearRequests();
    const degraded = await facts();
    expect(t.calls()).toEqual(['GET /v1/plugins', 'GET /v1/plugin/csi/aws-ebs0']);
    const at = degraded.plugins.get('aws-ebs0')!.nodeInstances!;
    expect([at.get(NODE1)!.healthy, at.get(NODE2)!.healthy]).toEqual([true, false]);
    expect(degraded.plugins.get('hostpath')!.nodeInstances).toBeNull();
  });
});

describe('STUCK_CLAIM', () => {
  beforeEach(() => start());

  it('should find a failed allocation holding its write claim, with its evidence and remedies', async () => {
    seedVolume(t.sim, 'db');
    const alloc = place('db');
    t.sim.failAllocation(alloc, { holdClaims: true });
    await settle();
    const found = await check('db');
    expect(kinds(found)).toEqual([`STUCK_CLAIM/CRITICAL/claim:${alloc}`]);
    const [f] = found as [Finding];
    const consumer = (await read('db')).attachments[0]!.consumer as VolumeAllocationConsumer;
    expect(f.startedAt).toBe(new Date(Date.parse(consumer.updatedAt!)).toISOString());
    expect(f.summary).toMatch(
      /^The write claim of allocation [0-9a-f]{8} \(job job-db, failed\/run\) on node node-1111 /,
    );
    expect(f.summary).toContain('exhausted its available writer claims');
    expect(f.evidence).toMatchObject({
      __typename: 'VolumeClaimEvidence',
      consumerFound: true,
      consumerStatus: 'failed',
      consumerDesiredStatus: 'run',
      nodeId: NODE1,
      attachment: { consumerId: alloc, access: 'READ_WRITE', state: 'DETACHING' },
    });
    expect(f.remedies.map((r) => `${r.action}/${r.who}`)).toEqual([
      'WAIT_FOR_CLAIM_GC/NOBODY',
      'DETACH_FROM_NODE/VOLUME_WRITER',
      'RUN_SYSTEM_GC/ADMIN',
      'FORCE_DEREGISTER/VOLUME_WRITER',
    ]);
    const [wait, detach, gc, deregister] = f.remedies;
    expect([wait!.mutation, wait!.cli, gc!.mutation, gc!.cli]).toEqual([null, null, null, 'nomad system gc']);
    expect(detach!.cli).toBe(`nomad volume detach -namespace=default db ${NODE1}`);
    expect(detach!.mutation!.document).toMatch(/^mutation DetachVolume\(\$input: DetachVolumeInput!\)/);
    const input = detach!.mutation!.variables.input as { volumeId: string; target: unknown };
    expect(decodeGlobalId(input.volumeId, 'Volume')).toMatchObject({
      backend: 'east',
      scope: 'default',
      nativeId: 'db',
    });
    expect(input.target).toEqual({ node: { nodeId: NODE1 } });
    expect(deregister!.cli).toBe('nomad volume deregister -namespace=default -force db');
    expect(deregister!.mutation!.variables).toEqual({ input: { volumeId: input.volumeId, force: true } });
  });

  it('should keep the claim visible once the allocation is garbage-collected, dated from when it was first seen released', async () => {
    seedVolume(t.sim, 'db');
    const alloc = place('db');
    t.sim.failAllocation(alloc, { holdClaims: true });
    await settle();
    await check('db');
    const firstPass = ctx.now;
    t.sim.gcAllocation(alloc);
    await settle();
    const [f] = (await check('db')) as [Finding];
    expect(f.evidence).toMatchObject({ consumerFound: false, consumerStatus: null, nodeId: null });
    expect(f.summary).toMatch(/^The write claim of garbage-collected allocation [0-9a-f]{8} has outlived/);
    expect(f.startedAt).toBe(new Date(firstPass).toISOString());
    // Nomad no longer says which node: no detach to offer.
    expect(f.remedies.map((r) => r.action)).toEqual(['WAIT_FOR_CLAIM_GC', 'RUN_SYSTEM_GC', 'FORCE_DEREGISTER']);
  });

  it('should be a WARNING on a multi-writer volume, whose claims never run out', async () => {
    seedVolume(t.sim, 'shared', 'default', {
      RequestedCapabilities: [{ AccessMode: 'multi-node-multi-writer', AttachmentMode: 'file-system' }],
    });
    const live = place('shared', NODE2);
    const failed = place('shared');
    t.sim.failAllocation(failed, { holdClaims: true });
    await settle();
    expect(kinds(await check('shared'))).toEqual([`STUCK_CLAIM/WARNING/claim:${failed}`]);
    // A live allocation still claims it: Nomad would refuse the forced deregister.
    const [f] = await check('shared');
    expect(f!.remedies.map((r) => r.action)).not.toContain('FORCE_DEREGISTER');
    expect(live).toBeTruthy();
  });

  it("should end when the adapter's detach releases the claim", async () => {
    seedVolume(t.sim, 'db');
    const alloc = place('db');
    t.sim.failAllocation(alloc, { holdClaims: true });
    await settle();
    expect(kinds(await check('db'))).toEqual([`STUCK_CLAIM/CRITICAL/claim:${alloc}`]);
    await t.backend.detachVolume(t.ref('db'), { kind: 'node', nodeId: NODE1 }, t.o);
    await until(async () => (await read('db')).attachments.length === 0, 'the volume watcher to free the claim');
    expect(await check('db')).toEqual([]);
  });

  it("should end when Nomad's claim GC frees the claim", async () => {
    seedVolume(t.sim, 'db');
    t.sim.failAllocation(place('db'), { holdClaims: true });
    await settle();
    expect(await check('db')).toHaveLength(1);
    t.sim.runClaimGC();
    await until(async () => (await read('db')).attachments.length === 0, 'the claim GC');
    expect(await check('db')).toEqual([]);
  });
});

describe('never a problem', () => {
  it('should not flag a claim of a running or pending allocation', async () => {
    await start();
    seedVolume(t.sim, 'db');
    seedVolume(t.sim, 'cache', 'default', { PluginID: 'hostpath', ExternalID: '' });
    place('db');
    t.sim.placeAllocation({
      jobId: 'c',
      nodeId: NODE1,
      clientStatus: 'pending',
      volumes: [{ volumeId: 'cache', mode: 'write' }],
    });
    // Even with the node plugin down: nothing needs it until the allocation stops.
    t.sim.setNodePluginHealth('aws-ebs0', NODE1, false);
    expect(await check('db')).toEqual([]);
    expect(await check('cache')).toEqual([]);
  });

  it('should not flag a release within its threshold', async () => {
    await start({ stuckClaimMs: 660_000, missingPluginMs: 120_000 });
    seedVolume(t.sim, 'db');
    const alloc = place('db');
    t.sim.setVolumeWatcherPaused(true);
    t.sim.setAllocationStatus(alloc, { desiredStatus: 'stop', clientStatus: 'complete' });
    await settle();
    expect((await read('db')).attachments).toHaveLength(1);
    expect(await check('db')).toEqual([]);
    // The same claim, 11 minutes on by the doctor's clock, is stuck.
    ctx.ahead = 660_000;
    expect(kinds(await check('db'))).toEqual([`STUCK_CLAIM/CRITICAL/claim:${alloc}`]);
    t.sim.setVolumeWatcherPaused(false);
  });

  it("should not flag a volume one of the gateway's own operations is changing", async () => {
    await start();
    seedVolume(t.sim, 'db');
    t.sim.failAllocation(place('db'), { holdClaims: true });
    await settle();
    ctx.running.add('db');
    expect(await check('db')).toEqual([]);
    ctx.running.clear();
    expect(await check('db')).toHaveLength(1);
  });

  it('should not check a list stub, whose claims are unknown', async () => {
    await start();
    seedVolume(t.sim, 'db');
    t.sim.failAllocation(place('db'), { holdClaims: true });
    await settle();
    const page = await t.backend.listVolumes({ namespace: 'default', limit: 10, token: null }, t.o);
    expect(facet().checkVolume(page.items[0]!.item, null, ctx)).toEqual([]);
  });

  it("should not blame the plugin for a lost allocation's claim: Nomad skips the node unpublish of a down node", async () => {
    await start();
    seedVolume(t.sim, 'db');
    const alloc = place('db');
    t.sim.setNodePluginHealth('aws-ebs0', NODE1, false);
    t.sim.setAllocationStatus(alloc, { clientStatus: 'lost', desiredStatus: 'stop' });
    await settle();
    expect(kinds(await check('db')).map((k) => k.split('/')[0])).toEqual(['STUCK_CLAIM']);
  });
});

describe('CLAIM_ON_MISSING_PLUGIN', () => {
  it("should find a stopped allocation's claim on a node whose plugin stopped, and end when the plugin is back", async () => {
    await start({ stuckClaimMs: 660_000, missingPluginMs: 0 });
    seedVolume(t.sim, 'db');
    const alloc = place('db');
    t.sim.setNodePluginHealth('aws-ebs0', NODE1, false);
    t.sim.setAllocationStatus(alloc, { clientStatus: 'complete', desiredStatus: 'stop' });
    await settle();
    expect((await read('db')).attachments).toHaveLength(1);
    const f0 = await facts();
    const found = await check('db', f0);
    expect(kinds(found)).toEqual([`CLAIM_ON_MISSING_PLUGIN/CRITICAL/node-plugin:${alloc}`]);
    const [f] = found as [Finding];
    const instance = f0.plugins.get('aws-ebs0')!.nodeInstances!.get(NODE1)!;
    expect(f.evidence).toEqual<PluginEvidence>({
      __typename: 'VolumePluginEvidence',
      pluginId: 'aws-ebs0',
      nodeId: NODE1,
      nodePluginHealthy: false,
      controllerRequired: true,
      controllersHealthy: 1,
      controllersExpected: 1,
      nodesHealthy: 1,
      nodesExpected: 2,
      attachment: expect.objectContaining({ consumerId: alloc }),
    });
    // Stuck since both hold: the later of the allocation's stop and the instance's failure.
    const consumer = (await read('db')).attachments[0]!.consumer as VolumeAllocationConsumer;
    expect(Date.parse(f.startedAt!)).toBe(Math.max(Date.parse(consumer.updatedAt!), Date.parse(instance.since!)));
    expect(f.summary).toContain('plugin "aws-ebs0" has no healthy node instance on node node-1111');
    expect(f.remedies.map((r) => [r.action, r.who, r.cli])).toEqual([
      ['RESTORE_NODE_PLUGIN', 'OPERATOR', `nomad alloc restart ${instance.allocationId}`],
      ['FORCE_DEREGISTER', 'VOLUME_WRITER', 'nomad volume deregister -namespace=default -force db'],
    ]);
    // A detach cannot help while the plugin is down: Nomad answers with the node's error.
    await expect(t.backend.detachVolume(t.ref('db'), { kind: 'node', nodeId: NODE1 }, t.o)).rejects.toThrow(
      /could not detach from node/,
    );

    t.sim.setNodePluginHealth('aws-ebs0', NODE1, true);
    expect(await check('db')).toEqual([]);
  });

  it('should wait its grace period (a plugin that restarts is no alarm)', async () => {
    await start({ stuckClaimMs: 660_000, missingPluginMs: 120_000 });
    seedVolume(t.sim, 'db');
    const alloc = place('db');
    t.sim.setNodePluginHealth('aws-ebs0', NODE1, false);
    t.sim.setAllocationStatus(alloc, { clientStatus: 'complete', desiredStatus: 'stop' });
    await settle();
    expect(await check('db')).toEqual([]);
    ctx.ahead = 120_000;
    expect(kinds(await check('db'))).toEqual([`CLAIM_ON_MISSING_PLUGIN/CRITICAL/node-plugin:${alloc}`]);
  });

  it('should find a volume that needs a controller while none is healthy: WARNING idle, CRITICAL with a claim to release', async () => {
    await start({ stuckClaimMs: 660_000, missingPluginMs: 0 });
    seedVolume(t.sim, 'idle');
    seedVolume(t.sim, 'db');
    const alloc = place('db');
    t.sim.setPluginHealth('aws-ebs0', { controllersHealthy: 0 });
    t.sim.setAllocationStatus(alloc, { clientStatus: 'failed' });
    await settle();
    const f = await facts();
    const idle = await check('idle', f);
    expect(kinds(idle)).toEqual(['CLAIM_ON_MISSING_PLUGIN/WARNING/controller:aws-ebs0']);
    expect(idle[0]!.evidence).toMatchObject({
      nodeId: null,
      nodePluginHealthy: null,
      attachment: null,
      controllerRequired: true,
      controllersHealthy: 0,
      controllersExpected: 1,
    });
    expect(idle[0]!.remedies.map((r) => [r.action, r.cli])).toEqual([
      ['RESTORE_CONTROLLER_PLUGIN', 'nomad plugin status -verbose aws-ebs0'],
    ]);
    expect(kinds(await check('db', f))).toEqual(['CLAIM_ON_MISSING_PLUGIN/CRITICAL/controller:aws-ebs0']);
    // A node-only plugin needs no controller.
    seedVolume(t.sim, 'scratch', 'default', { PluginID: 'hostpath', ExternalID: '' });
    expect(await check('scratch')).toEqual([]);

    t.sim.setPluginHealth('aws-ebs0', { controllersHealthy: 1 });
    expect(await check('idle')).toEqual([]);
  });

  it("should use the volume's own counts before the first facts are read", async () => {
    await start();
    seedVolume(t.sim, 'db');
    t.sim.setPluginHealth('aws-ebs0', { controllersHealthy: 0 });
    const out = facet().checkVolume(await read('db'), null, ctx);
    expect(kinds(out)).toEqual(['CLAIM_ON_MISSING_PLUGIN/WARNING/controller:aws-ebs0']);
  });
});

describe("the contract fixture's diagnosis", () => {
  it('should make each kind it declares, found by the first pass with the service credential', async () => {
    const cb = await contractFixture.start();
    try {
      const d = cb.backend.diagnosis!;
      expect(cb.diagnosis!.kinds).toEqual(d.kinds);
      for (const kind of cb.diagnosis!.kinds) {
        const ref = await cb.diagnosis!.make(kind);
        const volume = (await cb.backend.getVolume(ref, cb.diagnosis!.service))!;
        const pass = new TestContext();
        const found = d.checkVolume(volume, await d.readFacts!(cb.diagnosis!.service), pass);
        expect({ kind, found: found.map((f) => f.kind) }).toEqual({ kind, found: expect.arrayContaining([kind]) });
      }
    } finally {
      await cb.stop();
      // The fixture's simulator is the harness's, stopped with what else it started.
      await disposeAll();
    }
  });
});
