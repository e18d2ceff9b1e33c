/** The memory backend's contract fixture (test/contract/). */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PROBLEM_KINDS } from '../../contract/diagnosis';
import type { VolumeRef } from '../../contract/model';
import { loadConfig } from '../../../server/config';
import { build, GiB, type ContractFixture } from '../../../test/contract/fixture';
import type { MemoryBackend } from '../backend';
import { addCondition } from '../data/conditions';
import type { MemoryData } from '../data/shape';

/**
 * The memory backend, configured as the server configures it (`GATEWAY_BACKENDS=lab=memory` with
 * a data file and a 100 ms delay). Out of band is its data file: seeding and control write it and
 * `reload()` reads it again, as an operator editing the file would.
 */
export const contractFixture: ContractFixture = {
  name: 'memory',
  async start() {
    const dir = mkdtempSync(join(tmpdir(), 'contract-memory-'));
    const file = join(dir, 'data.json');
    const data: MemoryData = {
      volumes: [],
      tokens: [
        { token: 'contract-writer', name: 'writer', grants: [{ namespace: 'contract', write: true }] },
        { token: 'contract-elsewhere', name: 'elsewhere', grants: [{ namespace: 'elsewhere', write: true }] },
      ],
    };
    writeFileSync(file, JSON.stringify(data));
    const env = {
      GATEWAY_BACKENDS: 'lab=memory',
      GATEWAY_BACKEND_LAB_DATA_FILE: file,
      GATEWAY_BACKEND_LAB_OPERATION_DELAY_MS: '100',
      // Small thresholds: a made condition is past them within a second.
      GATEWAY_BACKEND_LAB_STUCK_TRANSITION_MS: '1000',
      GATEWAY_BACKEND_LAB_STUCK_CLAIM_MS: '1000',
      GATEWAY_BACKEND_LAB_DIAGNOSIS_GRACE_MS: '1000',
    };
    const backend = build(loadConfig(env).backends[0]!);
    const ref = (nativeId: string): VolumeRef => ({ backend: backend.id, namespace: 'contract', nativeId });
    /** Adds volumes to the data file and has the backend read it again. */
    const add = (ids: readonly string[], name: (id: string) => string): VolumeRef[] => {
      const now = (backend as MemoryBackend).snapshotData();
      now.volumes.push(...ids.map((id) => ({ namespace: 'contract', id, name: name(id), sizeBytes: GiB })));
      writeFileSync(file, JSON.stringify(now));
      (backend as MemoryBackend).reload();
      return ids.map(ref);
    };
    let made = 0;
    return {
      backend,
      scope: 'contract',
      caller: { credential: { token: 'contract-writer' } },
      denied: { credential: { token: 'contract-elsewhere' } },
      unknown: { credential: { token: 'no-such-token' } },
      refuses: { denied: 'FORBIDDEN', unknown: 'UNAUTHENTICATED' },
      seed: async (n, prefix) =>
        add(
          Array.from({ length: n }, (_, i) => `${prefix}-${i}`),
          (id) => id.replace('-', ' '),
        ),
      createSpec: (name) => ({ namespace: 'contract', name, capacityMinBytes: GiB }),
      missing: () => ref('no-such-volume'),
      control: { addVolume: async (name) => add([name], () => name)[0]! },
      diagnosis: {
        service: { credential: {} },
        kinds: PROBLEM_KINDS,
        async make(kind) {
          const id = `diag-${kind.toLowerCase().replaceAll('_', '-')}-${++made}`;
          const now = (backend as MemoryBackend).snapshotData();
          // Since an hour ago: past the fixture's thresholds by the backend's own times where it has them.
          addCondition(now, kind, 'contract', id, new Date(Date.now() - 3_600_000).toISOString());
          writeFileSync(file, JSON.stringify(now));
          (backend as MemoryBackend).reload();
          return ref(id);
        },
      },
      async stop() {
        await backend.close();
        rmSync(dir, { recursive: true, force: true });
      },
    };
  },
};
