/**
 * The memory backend's `diagnosis` facet: each kind found in the state its data hold, with its
 * evidence; no finding for a consistent data set, a claim whose workload runs, an attach or detach
 * in progress, or a transition the gateway's own operation drives; each problem ends when its
 * condition does (the backend's detach, delete, attach, a reload of healthy data), and the safest
 * remedy with a mutation, sent to a real gateway over HTTP, ends it.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { CallOptions } from '../../adapters/contract/call-options';
import type {
  ClaimEvidence,
  DiagnosisContext,
  DriftEvidence,
  Finding,
  PluginEvidence,
  ProblemKind,
  StatusEvidence,
} from '../../adapters/contract/diagnosis';
import type { VolumeRef } from '../../adapters/contract/model';
import { MemoryBackend } from '../../adapters/memory/backend';
import { addCondition } from '../../adapters/memory/data/conditions';
import type { MemoryData } from '../../adapters/memory/data/shape';
import { startGateway, type RunningGateway } from '../../server/app';
import { createRegistry } from '../../server/backends';
import { loadConfig } from '../../server/config';
import { createLogger } from '../../server/logger';
import { until } from '../support/until';

const SERVICE: CallOptions = { credential: {} };
const HOUR_AGO = (): string => new Date(Date.now() - 3_600_000).toISOString();
const T = { stuckTransitionMs: 300, stuckClaimMs: 300, graceMs: 300 };
const ref = (nativeId: string, namespace = 'default'): VolumeRef => ({ backend: 'lab', namespace, nativeId });

/** The doctor's memory of first sightings across passes: a condition is first seen when first asked. */
class Doctor {
  readonly #seen = new Map<string, number>();
  running = false;

  constructor(readonly b: MemoryBackend) {}

  /** One pass at `now`: the facts, the watcher's view, and the facts against the view. */
  async pass(now = Date.now()): Promise<Finding[]> {
    const ctx: DiagnosisContext = {
      now,
      operationRunning: () => this.running,
      firstSeen: (r, c) => {
        const k = `${r.namespace}/${r.nativeId}/${c}`;
        if (!this.#seen.has(k)) this.#seen.set(k, now);
        return this.#seen.get(k)!;
      },
    };
    const d = this.b.diagnosis;
    const facts = await d.readFacts(SERVICE);
    const w = this.b.createWatcher({ onDeltas: () => {} });
    w.start();
    const volumes = w.volumes();
    await w.stop();
    const inView = new Set(volumes.map((v) => `${v.ref.namespace}/${v.ref.nativeId}`));
    return [
      ...volumes.flatMap((v) => d.checkVolume(v, facts, ctx)),
      ...d.checkFacts(facts, (r) => inView.has(`${r.namespace}/${r.nativeId}`), ctx),
    ];
  }

  /** The findings on one volume, as kind and subject. */
  async on(id: string, now?: number): Promise<string[]> {
    return (await this.pass(now)).filter((f) => f.volume.nativeId === id).map((f) => `${f.kind} ${f.subject}`);
  }
}

/** A backend over `data` (changes take `delayMs`) and its doctor. */
function doctorOf(data: MemoryData, delayMs = 50, thresholds: Partial<typeof T> | null = T): Doctor {
  return new Doctor(
    new MemoryBackend({ backend: 'lab', source: { data }, operationDelayMs: delayMs, diagnosis: thresholds ?? {} }),
  );
}

/** Data with one volume in `kind`'s state (id `x`). */
function conditionData(kind: ProblemKind): MemoryData {
  const data: MemoryData = { volumes: [] };
  addCondition(data, kind, 'default', 'x', HOUR_AGO());
  return data;
}

const only = async (d: Doctor, kind: ProblemKind): Promise<Finding> => {
  const found = (await d.pass()).filter((f) => f.kind === kind);
  expect(found).toHaveLength(1);
  return found[0]!;
};

describe('memory diagnosis: each kind in the state the data hold', () => {
  it('should find a claim of a failed workload, dated by the workload, and one of a gone workload only after its threshold', async () => {
    const data = conditionData('STUCK_CLAIM');
    const d = doctorOf(data);
    const f = await only(d, 'STUCK_CLAIM');
    expect(f).toMatchObject({ severity: 'CRITICAL', subject: 'x-att', startedAt: data.workloads![0]!.updatedAt });
    expect(f.evidence as ClaimEvidence).toMatchObject({
      consumerFound: true,
      consumerStatus: 'failed',
      consumerDesiredStatus: 'stop',
      nodeId: 'x-host',
      attachment: { consumerId: 'x-att', state: 'ATTACHED' },
    });
    expect(f.remedies.map((r) => [r.action, r.who, r.mutation !== null])).toEqual([
      ['DETACH_CLAIM', 'VOLUME_WRITER', true],
    ]);

    const gone = doctorOf({ ...structuredClone(data), workloads: [] });
    const t0 = Date.now();
    expect(await gone.on('x', t0)).toEqual([]);
    const later = (await gone.pass(t0 + T.stuckClaimMs)).filter((x) => x.kind === 'STUCK_CLAIM');
    expect(later.map((x) => [x.startedAt, (x.evidence as ClaimEvidence).consumerFound])).toEqual([[null, false]]);
  });

  it('should not find a claim whose workload is pending or running', async () => {
    for (const status of ['pending', 'running'] as const) {
      const data = conditionData('STUCK_CLAIM');
      data.workloads![0]!.status = status;
      const d = doctorOf(data);
      const t0 = Date.now();
      await d.pass(t0);
      expect(await d.on('x', t0 + 3_600_000)).toEqual([]);
    }
  });

  it('should find a claim on a host whose plugin is unhealthy or missing, after the grace period, and a volume with no healthy controller', async () => {
    const data = conditionData('CLAIM_ON_MISSING_PLUGIN');
    const d = doctorOf(data);
    const t0 = Date.now();
    expect(await d.on('x', t0)).toEqual([]);
    const [f] = (await d.pass(t0 + T.graceMs)).filter((x) => x.kind === 'CLAIM_ON_MISSING_PLUGIN');
    expect(f).toMatchObject({ severity: 'WARNING', subject: 'node:x-host', startedAt: null });
    expect(f!.evidence as PluginEvidence).toMatchObject({
      pluginId: 'memory',
      nodeId: 'x-host',
      nodePluginHealthy: false,
      controllerRequired: false,
      nodesHealthy: 0,
      nodesExpected: 1,
      attachment: { consumerId: 'x-att' },
    });
    expect(f!.remedies.map((r) => r.action)).toEqual(['RESTART_NODE_PLUGIN', 'DETACH_WITHOUT_PLUGIN']);

    data.hosts![0]!.plugin = 'missing';
    data.storagePlugin = { controllerRequired: true, controllersExpected: 2, controllersHealthy: 0 };
    const m = doctorOf(data);
    await m.pass(t0);
    const found = (await m.pass(t0 + T.graceMs)).filter((x) => x.kind === 'CLAIM_ON_MISSING_PLUGIN');
    expect(found.map((x) => [x.subject, x.severity, (x.evidence as PluginEvidence).nodePluginHealthy])).toEqual([
      ['node:x-host', 'WARNING', null],
      ['controller', 'CRITICAL', null],
    ]);
    expect(found[1]!.evidence).toMatchObject({ controllersHealthy: 0, controllersExpected: 2, attachment: null });
  });

  it('should find a transition no change holds, since its last write, unless an operation of the gateway drives it', async () => {
    const data = conditionData('STUCK_TRANSITION');
    const d = doctorOf(data);
    const f = await only(d, 'STUCK_TRANSITION');
    expect(f).toMatchObject({ severity: 'CRITICAL', subject: 'detaching', startedAt: data.volumes[0]!.updatedAt });
    expect(f.evidence as StatusEvidence).toEqual({
      __typename: 'VolumeStatusEvidence',
      status: 'DETACHING',
      backendStatus: 'detaching',
      updatedAt: data.volumes[0]!.updatedAt,
      since: data.volumes[0]!.updatedAt,
      sinceSource: 'LAST_WRITE_OR_FIRST_SEEN',
      thresholdMs: T.stuckTransitionMs,
    });
    expect(f.remedies.map((r) => r.action)).toEqual(['RETRY_DETACH', 'CLEAR_STATUS']);
    d.running = true;
    expect(await d.on('x')).toEqual([]);
  });

  it('should find a volume in error at once, offering a delete only while it is not attached', async () => {
    const data = conditionData('ERROR_STATE');
    const f = await only(doctorOf(data), 'ERROR_STATE');
    expect(f).toMatchObject({ severity: 'CRITICAL', subject: 'error' });
    expect((f.evidence as StatusEvidence).thresholdMs).toBeNull();
    expect(f.remedies.map((r) => r.action)).toEqual(['CLEAR_STATUS', 'DELETE_VOLUME']);
    data.volumes[0]!.attachments = [{ id: 'a', host: 'h' }];
    expect((await only(doctorOf(data), 'ERROR_STATE')).remedies.map((r) => r.action)).toEqual(['CLEAR_STATUS']);
  });

  it("should find drift both ways after the grace period: a gone host, a host that does not list the volume, a host's record the volume lacks, and one of a volume that does not exist", async () => {
    const data = conditionData('ATTACHMENT_DRIFT');
    data.volumes.push(
      { namespace: 'default', id: 'y', name: 'y', sizeBytes: 1, attachments: [{ id: 'y-att', host: 'h1' }] },
      { namespace: 'default', id: 'z', name: 'z', sizeBytes: 1 },
    );
    data.hosts!.push({ name: 'h1', volumes: ['default/z', 'default/gone'] });
    const d = doctorOf(data);
    const t0 = Date.now();
    expect(await d.pass(t0)).toEqual([]);
    const found = (await d.pass(t0 + T.graceMs)).map((f) => {
      const e = f.evidence as DriftEvidence;
      const side = e.computeSide ? 'compute' : 'volume';
      return [f.volume.nativeId, f.severity, e.serverId, e.server, side, f.remedies.map((r) => r.action).join(' ')];
    });
    expect(found).toEqual([
      ['x', 'WARNING', 'x-host', 'DELETED', 'volume', 'DETACH_STALE_RECORD'],
      ['y', 'WARNING', 'h1', 'LISTED', 'volume', 'DETACH_STALE_RECORD'],
      ['z', 'CRITICAL', 'h1', 'LISTED', 'compute', 'RECORD_ATTACHMENT DETACH_ON_HOST'],
      ['gone', 'WARNING', 'h1', 'LISTED', 'compute', 'DETACH_ON_HOST'],
    ]);
  });

  it('should know nothing of hosts when the data declare none', async () => {
    const data = conditionData('ATTACHMENT_DRIFT');
    delete data.hosts;
    const d = doctorOf(data);
    await d.pass();
    expect(await d.on('x', Date.now() + 3_600_000)).toEqual([]);
  });
});

describe('memory diagnosis: no false alarms', () => {
  it('should find nothing in the example file, the default set or a generated one', async () => {
    const sources = [
      { file: join(__dirname, '../../adapters/memory/data/example.json') },
      { default: true as const },
      { generate: { volumes: 50, attachmentsPerVolume: 2 } },
    ];
    for (const source of sources) {
      const d = new Doctor(new MemoryBackend({ backend: 'lab', source, diagnosis: T }));
      await d.pass(Date.now() - 3_600_000);
      expect(await d.pass()).toEqual([]);
    }
  });

  it('should not report an attach or a detach in progress, with the default thresholds, on declared hosts', async () => {
    const data: MemoryData = {
      volumes: [{ namespace: 'default', id: 'v', name: 'v', sizeBytes: 1 }],
      hosts: [{ name: 'h', volumes: [] }],
    };
    const d = doctorOf(data, 400, null);
    const b = d.b;
    const accepted = await b.attachVolume(ref('v'), { kind: 'host', connector: { host: 'h' } }, SERVICE);
    expect(b.snapshotData().volumes[0]!.status).toBe('ATTACHING');
    expect(await d.on('v')).toEqual([]);
    await until(() => b.snapshotData().volumes[0]!.status === undefined, 'the attach to end');
    // The host's own record followed the attach.
    expect(b.snapshotData().hosts).toEqual([{ name: 'h', volumes: ['default/v'] }]);
    expect(await d.on('v')).toEqual([]);
    await b.detachVolume(ref('v'), { kind: 'hostAttachment', attachmentId: accepted.result!.consumerId }, SERVICE);
    expect(await d.on('v')).toEqual([]);
    await until(() => b.snapshotData().volumes[0]!.attachments!.length === 0, 'the detach to end');
    expect(b.snapshotData().hosts).toEqual([{ name: 'h', volumes: [] }]);
    expect(await d.on('v')).toEqual([]);
  });
});

describe('memory diagnosis: a problem ends when its condition does', () => {
  const detachX = (d: Doctor): Promise<unknown> =>
    d.b.detachVolume(ref('x'), { kind: 'hostAttachment', attachmentId: 'x-att' }, SERVICE);
  /** Until no pass finds `kind`. */
  const gone = async (d: Doctor, kind: ProblemKind): Promise<void> =>
    until(async () => !(await d.pass()).some((f) => f.kind === kind), `${kind} to end`);

  it.each([['STUCK_CLAIM'], ['STUCK_TRANSITION'], ['ATTACHMENT_DRIFT']] as const)(
    'should end %s with the backend detach',
    async (kind) => {
      const d = doctorOf(conditionData(kind));
      await d.pass(Date.now() - 3_600_000);
      expect((await d.pass()).map((f) => f.kind)).toEqual([kind]);
      await detachX(d);
      await until(() => d.b.snapshotData().volumes[0]!.attachments!.length === 0, 'the detach to end');
      expect(d.b.snapshotData().volumes[0]).not.toHaveProperty('status');
      expect(await d.pass()).toEqual([]);
    },
  );

  it('should refuse to retry a transition while its change runs', async () => {
    const d = doctorOf({ volumes: [{ namespace: 'default', id: 'x', name: 'x', sizeBytes: 1 }] }, 1000);
    await d.b.attachVolume(ref('x'), { kind: 'host', connector: { host: 'h' } }, SERVICE);
    const att = d.b.snapshotData().volumes[0]!.attachments![0]!.id;
    await expect(
      d.b.detachVolume(ref('x'), { kind: 'hostAttachment', attachmentId: att }, SERVICE),
    ).rejects.toMatchObject({ code: 'CONFLICT' });
    await d.b.close();
  });

  it("should end an error with the delete, a plugin's with healthy data, and a host's record with an attach", async () => {
    const err = doctorOf(conditionData('ERROR_STATE'));
    await err.b.deleteVolume(ref('x'), {}, SERVICE);
    await gone(err, 'ERROR_STATE');

    const file = join(mkdtempSync(join(tmpdir(), 'memory-diagnosis-')), 'data.json');
    const data = conditionData('CLAIM_ON_MISSING_PLUGIN');
    writeFileSync(file, JSON.stringify(data));
    const plugin = new Doctor(new MemoryBackend({ backend: 'lab', source: { file }, diagnosis: T }));
    await plugin.pass(Date.now() - 3_600_000);
    expect((await plugin.pass()).map((f) => f.kind)).toEqual(['CLAIM_ON_MISSING_PLUGIN']);
    data.hosts![0]!.plugin = 'healthy';
    writeFileSync(file, JSON.stringify(data));
    plugin.b.reload();
    expect(await plugin.pass()).toEqual([]);
    rmSync(file, { force: true });

    const drift: MemoryData = {
      volumes: [{ namespace: 'default', id: 'x', name: 'x', sizeBytes: 1 }],
      hosts: [{ name: 'h', volumes: ['default/x'] }],
    };
    const d = doctorOf(drift);
    await d.pass(Date.now() - 3_600_000);
    expect((await d.pass()).map((f) => f.kind)).toEqual(['ATTACHMENT_DRIFT']);
    await d.b.attachVolume(ref('x'), { kind: 'host', connector: { host: 'h' } }, SERVICE);
    await gone(d, 'ATTACHMENT_DRIFT');
    expect(d.b.snapshotData().hosts).toEqual([{ name: 'h', volumes: ['default/x'] }]);
  });
});

describe('memory diagnosis: the safest remedy with a mutation, through the gateway', () => {
  let gateway: RunningGateway;
  let dir: string;
  let d: Doctor;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'memory-remedies-'));
    const data: MemoryData = { volumes: [] };
    for (const kind of [
      'STUCK_CLAIM',
      'CLAIM_ON_MISSING_PLUGIN',
      'STUCK_TRANSITION',
      'ERROR_STATE',
      'ATTACHMENT_DRIFT',
    ] as const)
      addCondition(data, kind, 'default', kind.toLowerCase().replaceAll('_', '-'), HOUR_AGO());
    writeFileSync(join(dir, 'data.json'), JSON.stringify(data));
    const env = {
      GATEWAY_BACKENDS: 'lab=memory',
      GATEWAY_BACKEND_LAB_DATA_FILE: join(dir, 'data.json'),
      GATEWAY_BACKEND_LAB_OPERATION_DELAY_MS: '100',
      GATEWAY_BACKEND_LAB_STUCK_TRANSITION_MS: '300',
      GATEWAY_BACKEND_LAB_STUCK_CLAIM_MS: '300',
      GATEWAY_BACKEND_LAB_DIAGNOSIS_GRACE_MS: '300',
    };
    const registry = createRegistry(loadConfig(env).backends);
    gateway = await startGateway({
      config: { port: 0, host: '127.0.0.1', maxConcurrentReads: 16, maxBodyBytes: 1_048_576 },
      registry,
      logger: createLogger('silent'),
      operationOptions: { pollMs: 50, maxPollMs: 100 },
      readinessProbe: false,
    });
    d = new Doctor(registry.forId('lab') as MemoryBackend);
  });

  afterAll(async () => {
    await gateway?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('should end each kind once its first remedy with a mutation is sent as it stands', async () => {
    await d.pass(Date.now() - 3_600_000);
    const open = await d.pass();
    expect(new Set(open.map((f) => f.kind)).size).toBe(5);
    for (const f of open) {
      const r = f.remedies.find((x) => x.mutation !== null)!;
      const res = await fetch(gateway.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ query: r.mutation!.document, variables: r.mutation!.variables }),
      });
      const body = (await res.json()) as { errors?: unknown };
      expect([f.kind, r.action, body.errors]).toEqual([f.kind, r.action, undefined]);
    }
    await until(async () => (await d.pass()).length === 0, 'every problem to end');
  });
});
