/**
 * The memory data that hold the states the doctor finds (workloads, hosts, the storage plugin): checked
 * when read, kept when written back, optional (older data read as before); and the doctor's
 * thresholds, derived from the operation delay unless set.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MemoryBackend } from '../../adapters/memory/backend';
import type { MemoryData } from '../../adapters/memory/data/shape';
import { memoryModule } from '../../adapters/memory/module';
import { loadConfig } from '../../server/config';
import { createRegistry } from '../../server/backends';

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'memory-diagnosis-data-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const WORLD: MemoryData = {
  volumes: [
    {
      namespace: 'default',
      id: 'v',
      name: 'v',
      sizeBytes: 1,
      attachments: [{ id: 'v-att', host: 'h', workload: 'job-1' }],
    },
  ],
  workloads: [{ id: 'job-1', status: 'running', desiredStatus: 'run', updatedAt: '2026-01-01T00:00:00Z' }],
  hosts: [{ name: 'h', volumes: ['default/v'], plugin: 'healthy' }],
  storagePlugin: { id: 'csi', controllerRequired: true, controllersExpected: 2, controllersHealthy: 1 },
};

const fileWith = (name: string, data: unknown): string => {
  const path = join(dir, name);
  writeFileSync(path, JSON.stringify(data));
  return path;
};

const load = (data: unknown): MemoryBackend =>
  new MemoryBackend({ backend: 'lab', source: { file: fileWith('d.json', data) } });

describe('memory data: the state the doctor reads', () => {
  it('should refuse a bad workload, host or storage plugin, naming it', () => {
    const bad: Array<[unknown, RegExp]> = [
      [{ ...WORLD, workloads: [{ id: 'job-1', status: 'dead' }] }, /workloads\[0\]\.status/],
      [{ ...WORLD, workloads: [{ id: 'job-1', status: 'failed', desiredStatus: 'go' }] }, /desiredStatus/],
      [{ ...WORLD, hosts: [{ name: 'h', volumes: ['v'] }] }, /hosts\[0\]\.volumes/],
      [{ ...WORLD, hosts: [{ name: 'h', plugin: 'sick' }] }, /hosts\[0\]\.plugin/],
      [{ ...WORLD, storagePlugin: { controllersHealthy: -1 } }, /storagePlugin/],
      [
        {
          volumes: [
            {
              namespace: 'n',
              id: 'v',
              name: 'v',
              sizeBytes: 1,
              attachments: [{ id: 'a', host: 'h', workload: '../x' }],
            },
          ],
        },
        /attachments\[0\]\.workload/,
      ],
    ];
    for (const [data, where] of bad) expect(() => load(data)).toThrow(where);
  });

  it('should write the state back as it read it, and keep the host records in step with a detach', async () => {
    const path = fileWith('wb.json', WORLD);
    const b = new MemoryBackend({ backend: 'lab', source: { file: path, writeBack: true }, operationDelayMs: 0 });
    await b.detachVolume(
      { backend: 'lab', namespace: 'default', nativeId: 'v' },
      { kind: 'hostAttachment', attachmentId: 'v-att' },
      { credential: {} },
    );
    await b.flush();
    const written = JSON.parse(readFileSync(path, 'utf8')) as MemoryData;
    expect(written.workloads).toEqual(WORLD.workloads);
    expect(written.storagePlugin).toEqual(WORLD.storagePlugin);
    expect(written.hosts).toEqual([{ name: 'h', volumes: [], plugin: 'healthy' }]);
  });

  it("should show the claim's workload on the model's consumer only, and read data without the state as before", async () => {
    const b = load(WORLD);
    const v = await b.getVolume({ backend: 'lab', namespace: 'default', nativeId: 'v' }, { credential: {} });
    expect(v!.attachments[0]!.consumer).toEqual({
      __typename: 'VolumeHostConsumer',
      hostName: 'h',
      nodeId: 'h',
      workloadId: 'job-1',
    });
    const plain = load({ volumes: [{ namespace: 'default', id: 'v', name: 'v', sizeBytes: 1 }] }).snapshotData();
    expect(Object.keys(plain).sort()).toEqual(['snapshots', 'volumes']);
  });
});

describe('memory data: the doctor thresholds', () => {
  const thresholds = (env: Record<string, string>) =>
    (createRegistry(loadConfig({ GATEWAY_BACKENDS: 'lab=memory', ...env }).backends).forId('lab') as MemoryBackend)
      .diagnosis.thresholds;

  it('should derive each from the operation delay (three delays, at least 10 s) unless set', () => {
    expect(thresholds({})).toEqual({ stuckTransitionMs: 10_000, stuckClaimMs: 10_000, graceMs: 10_000 });
    expect(thresholds({ GATEWAY_BACKEND_LAB_OPERATION_DELAY_MS: '5000' })).toEqual({
      stuckTransitionMs: 15_000,
      stuckClaimMs: 15_000,
      graceMs: 15_000,
    });
    expect(
      thresholds({
        GATEWAY_BACKEND_LAB_STUCK_TRANSITION_MS: '60000',
        GATEWAY_BACKEND_LAB_STUCK_CLAIM_MS: '300000',
        GATEWAY_BACKEND_LAB_DIAGNOSIS_GRACE_MS: '20000',
      }),
    ).toEqual({ stuckTransitionMs: 60_000, stuckClaimMs: 300_000, graceMs: 20_000 });
    expect(() =>
      memoryModule.parseSettings(
        { stuckClaimMs: 0 },
        { id: 'lab', kind: 'memory', timeoutMs: 10_000, maxConnections: 16, readRetries: 2 },
        'b',
      ),
    ).toThrow(/b\.stuckClaimMs/);
  });
});
