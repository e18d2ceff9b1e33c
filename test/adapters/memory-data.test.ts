/**
 * The memory backend's data and settings: the seed generator's shape (the bench's 100 × 2), a data
 * file read at start, written back after changes (or left alone when volatile) and reloaded, bad
 * files and settings refused naming the setting, the module's settings parser, and injected
 * latency and failures reaching the shared circuit breaker.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { CallOptions } from '../../adapters/contract/call-options';
import type { CommonBackendSettings } from '../../adapters/contract/module';
import { BreakerBoard } from '../../adapters/contract/breaker';
import { MemoryBackend } from '../../adapters/memory/backend';
import { ConfigError, envPaths } from '../../adapters/contract/settings';
import { memoryModule } from '../../adapters/memory/module';
import { generateSeed } from '../../adapters/memory/data/seed';
import { BackendRegistry } from '../../domain/registry';
import { ReadinessState } from '../../server/readiness';
import { until } from '../support/until';

const ANY: CallOptions = { credential: {} };
const dir = mkdtempSync(join(tmpdir(), 'memory-backend-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const common = (id = 'lab'): CommonBackendSettings => ({
  id,
  kind: 'memory',
  timeoutMs: 10_000,
  maxConnections: 16,
  readRetries: 2,
});

describe('memory backend: seed generator', () => {
  it('should make N volumes × M host attachments, the same every time', async () => {
    const d = generateSeed({ volumes: 100, attachmentsPerVolume: 2 });
    expect(d.volumes).toHaveLength(100);
    expect(d.volumes.every((v) => v.attachments!.length === 2)).toBe(true);
    expect(generateSeed({ volumes: 100, attachmentsPerVolume: 2 })).toEqual(d);
    const b = new MemoryBackend({ backend: 'bench', source: { generate: { volumes: 100, attachmentsPerVolume: 2 } } });
    const page = await b.listVolumes({ namespace: '*', limit: 500, token: null }, ANY);
    expect(page.items).toHaveLength(100);
    expect(page.items.reduce((n, p) => n + p.item.attachments.length, 0)).toBe(200);
    expect(b.requiresCredential).toBe(false); // generated data declare no tokens: open
  });
});

describe('memory backend: data file', () => {
  const file = (name: string, data: unknown): string => {
    const path = join(dir, name);
    writeFileSync(path, JSON.stringify(data));
    return path;
  };
  const ONE = {
    volumes: [{ namespace: 'ns', id: 'v1', name: 'one', sizeBytes: 1024 }],
    tokens: [{ token: 't', grants: [{ namespace: 'ns', write: true }] }],
  };

  it('should write every change back to the file when writeBack is set, and reload what the file holds', async () => {
    const path = file('write-back.json', ONE);
    const b = new MemoryBackend({ backend: 'lab', source: { file: path, writeBack: true }, operationDelayMs: 0 });
    await b.createVolume(
      { namespace: 'ns', nativeId: 'v2', name: 'two', capacityMinBytes: 2048 },
      { credential: { token: 't' } },
    );
    await b.flush();
    const written = JSON.parse(readFileSync(path, 'utf8'));
    expect(written.volumes.map((v: { id: string }) => v.id)).toEqual(['v1', 'v2']);
    expect(written.tokens).toEqual(ONE.tokens);
    // A second backend reading the written file sees the same volumes.
    const again = new MemoryBackend({ backend: 'lab', source: { file: path } });
    expect(
      (await again.getVolume({ backend: 'lab', namespace: 'ns', nativeId: 'v2' }, { credential: { token: 't' } }))
        ?.sizeBytes,
    ).toBe(2048);
    // An edit of the file shows after reload.
    writeFileSync(path, JSON.stringify({ ...ONE, volumes: [{ ...ONE.volumes[0], name: 'edited' }] }));
    b.reload();
    expect(
      (await b.getVolume({ backend: 'lab', namespace: 'ns', nativeId: 'v1' }, { credential: { token: 't' } }))?.name,
    ).toBe('edited');
    expect(
      await b.getVolume({ backend: 'lab', namespace: 'ns', nativeId: 'v2' }, { credential: { token: 't' } }),
    ).toBeNull();
    await b.close();
  });

  it('should leave the file alone when volatile', async () => {
    const path = file('volatile.json', ONE);
    const b = new MemoryBackend({ backend: 'lab', source: { file: path }, operationDelayMs: 0 });
    await b.createVolume({ namespace: 'ns', nativeId: 'v2', name: 'two' }, { credential: { token: 't' } });
    await b.close();
    expect(JSON.parse(readFileSync(path, 'utf8'))).toEqual(ONE);
  });

  it('should refuse a bad file naming where, and keep its data when a reload finds one', async () => {
    expect(() => new MemoryBackend({ backend: 'lab', source: { file: join(dir, 'absent.json') } })).toThrow(
      ConfigError,
    );
    expect(
      () =>
        new MemoryBackend({
          backend: 'lab',
          source: { file: file('bad.json', { volumes: [{ namespace: 'ns', id: '../x', name: 'n', sizeBytes: 1 }] }) },
        }),
    ).toThrow(/volumes\[0\]\.id/);
    expect(
      () =>
        new MemoryBackend({
          backend: 'lab',
          source: { file: file('dup.json', { volumes: [ONE.volumes[0], ONE.volumes[0]] }) },
        }),
    ).toThrow(/repeats/);
    const path = file('reload-bad.json', ONE);
    const b = new MemoryBackend({ backend: 'lab', source: { file: path } });
    writeFileSync(path, '{ not json');
    expect(() => b.reload()).toThrow(/not JSON/);
    expect(b.snapshotData().volumes).toHaveLength(1);
  });
});

describe('memory backend: module and settings', () => {
  it('should need no URL, read its settings as strings or values, and name a bad one', () => {
    expect(memoryModule).toMatchObject({
      kind: 'memory',
      modelKind: 'MEMORY',
      needsUrl: false,
      credential: { header: 'X-Memory-Token' },
    });
    expect(envPaths(memoryModule.settings)).toMatchObject({
      DATA_FILE: 'dataFile',
      OPERATION_DELAY_MS: 'operationDelayMs',
      FAILURE_RATE: 'failureRate',
    });
    const s = memoryModule.parseSettings(
      { operationDelayMs: '250', failureRate: '0.5', seedVolumes: 10, seedAttachments: '3' },
      common(),
      'backends[0]',
    );
    expect(s).toMatchObject({
      operationDelayMs: 250,
      failureRate: 0.5,
      seedVolumes: 10,
      seedAttachments: 3,
      writeBack: false,
      latencyMs: 0,
    });
    expect(memoryModule.parseSettings({}, common(), 'backends[0]')).toMatchObject({
      operationDelayMs: 1000,
      failureRate: 0,
      seedAttachments: 2,
      writeBack: false,
    });
    expect(() => memoryModule.parseSettings({ failureRate: 2 }, common(), 'backends[0]')).toThrow(
      'backends[0].failureRate: must be a number from 0 to 1',
    );
    expect(() => memoryModule.parseSettings({ writeBack: 'yes' }, common(), 'backends[0]')).toThrow(
      /writeBack: needs dataFile/,
    );
  });

  it('should build a backend from its settings with the data they name', async () => {
    const b = memoryModule.create(
      memoryModule.parseSettings({ seedVolumes: '5', seedAttachments: '1' }, common('gen'), 'x'),
      { breakers: new BreakerBoard() },
    );
    const page = await b.listVolumes({ namespace: '*', limit: 100, token: null }, ANY);
    expect(page.items.map((p) => p.item.attachments.length)).toEqual([1, 1, 1, 1, 1]);
    expect(b.id).toBe('gen');
  });
});

describe('memory backend: injected faults', () => {
  it('should fail calls at the failure rate as BACKEND_UNAVAILABLE until the shared breaker opens', async () => {
    const breakers = new BreakerBoard({
      failures: 3,
      failureRatePercent: 50,
      minCalls: 100,
      windowMs: 30_000,
      openMs: 60_000,
      maxOpenMs: 60_000,
    });
    const b = new MemoryBackend({
      backend: 'flaky',
      source: { generate: { volumes: 3, attachmentsPerVolume: 0 } },
      faults: { failureRate: 1 },
      breakers,
    });
    const list = () => b.listVolumes({ namespace: '*', limit: 10, token: null }, ANY);
    for (let i = 0; i < 3; i++)
      await expect(list()).rejects.toMatchObject({ code: 'BACKEND_UNAVAILABLE', backend: 'flaky', retryable: true });
    expect(breakers.statuses('flaky')).toMatchObject([{ state: 'OPEN' }]);
    await expect(list()).rejects.toThrow(/circuit breaker is open/);
    expect((await b.health()).status).toBe('DOWN');
    b.faults = { latencyMs: 0, latencyJitterMs: 0, failureRate: 0 };
    await expect(list()).rejects.toThrow(/circuit breaker is open/); // open until its time is up
  });

  it("should be closed by the background probe as soon as its open time ends, never by a caller's call", async () => {
    const breakers = new BreakerBoard({
      failures: 3,
      failureRatePercent: 50,
      minCalls: 100,
      windowMs: 30_000,
      openMs: 300,
      maxOpenMs: 60_000,
    });
    const b = new MemoryBackend({
      backend: 'flaky',
      source: { generate: { volumes: 3, attachmentsPerVolume: 0 } },
      faults: { failureRate: 1 },
      breakers,
    });
    const list = () => b.listVolumes({ namespace: '*', limit: 10, token: null }, ANY);
    // A probe interval far beyond the test: only the wake at the open time's end can close it in time.
    const readiness = new ReadinessState({
      registry: new BackendRegistry([b], { breakers }),
      config: { probeIntervalMs: 600_000 },
    });
    readiness.start('breakers');
    try {
      for (let i = 0; i < 3; i++) await expect(list()).rejects.toMatchObject({ code: 'BACKEND_UNAVAILABLE' });
      const opened = Date.now();
      b.faults = { latencyMs: 0, latencyJitterMs: 0, failureRate: 0 };
      // The backend is back, but callers are refused until the probe closes the breaker.
      await expect(list()).rejects.toThrow(/circuit breaker is open/);
      await new Promise((r) => setTimeout(r, 350));
      await until(() => breakers.statuses('flaky')[0]?.state === 'CLOSED', 'the probe to close the breaker', 5_000, 10);
      expect(Date.now() - opened).toBeGreaterThanOrEqual(300);
      expect((await list()).items).toHaveLength(3);
    } finally {
      await readiness.stop();
    }
  });

  it('should add the injected latency to calls and give up when the call is aborted', async () => {
    const b = new MemoryBackend({
      backend: 'slow',
      source: { generate: { volumes: 1, attachmentsPerVolume: 0 } },
      faults: { latencyMs: 200 },
    });
    const started = performance.now();
    await b.getVolume({ backend: 'slow', namespace: 'default', nativeId: 'vol-0000' }, ANY);
    expect(performance.now() - started).toBeGreaterThanOrEqual(190);
    const signal = AbortSignal.timeout(20);
    await expect(
      b.getVolume({ backend: 'slow', namespace: 'default', nativeId: 'vol-0000' }, { ...ANY, signal }),
    ).rejects.toMatchObject({ name: 'TimeoutError' });
  });
});

describe('memory backend: the example data file', () => {
  it('should load adapters/memory/data/example.json as it is documented (docs/memory.md)', async () => {
    const b = new MemoryBackend({
      backend: 'lab',
      source: { file: join(__dirname, '../../adapters/memory/data/example.json') },
    });
    expect(b.requiresCredential).toBe(true);
    const page = await b.listVolumes(
      { namespace: '*', limit: 10, token: null },
      { credential: { token: 'change-me-viewer' } },
    );
    expect(page.items.map((p) => p.item.ref.nativeId)).toEqual(['pg-data', 'shared-assets']);
  });
});
