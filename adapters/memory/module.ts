/**
 * The memory backend's module: everything the rest of the gateway needs to know about the
 * `memory` kind. `GATEWAY_BACKENDS=lab=memory` is enough (no URL); its other settings are
 * `GATEWAY_BACKEND_LAB_<NAME>` (settings.ts) or the same keys in the file's backend entry.
 */
import type { BackendModule } from '../contract/module';
import { MemoryBackend } from './backend';
import type { MemorySource } from './data/keeper';
import { MEMORY_SETTINGS, parseMemorySettings, type MemorySettings } from './settings';

/** Where a backend's data come from, by its settings. */
export function memorySource(s: MemorySettings): MemorySource {
  if (s.dataFile) return { file: s.dataFile, writeBack: s.writeBack };
  if (s.seedVolumes !== undefined)
    return { generate: { volumes: s.seedVolumes, attachmentsPerVolume: s.seedAttachments } };
  return { default: true };
}

export const memoryModule: BackendModule<MemorySettings> = {
  kind: 'memory',
  modelKind: 'MEMORY',
  displayName: 'Memory',
  needsUrl: false,
  credential: { header: 'X-Memory-Token', describe: 'memory backend token', required: false },
  helpExample: {
    env: { GATEWAY_BACKENDS: 'lab=memory' },
    says: 'a memory backend: volumes kept in the process, no cloud (memory.md in the docs)',
  },
  parseSettings: parseMemorySettings,
  settings: MEMORY_SETTINGS,
  create: (s, deps) =>
    new MemoryBackend({
      backend: s.id,
      source: memorySource(s),
      operationDelayMs: s.operationDelayMs,
      diagnosis: { stuckTransitionMs: s.stuckTransitionMs, stuckClaimMs: s.stuckClaimMs, graceMs: s.diagnosisGraceMs },
      faults: { latencyMs: s.latencyMs, latencyJitterMs: s.latencyJitterMs, failureRate: s.failureRate },
      breakers: deps.breakers,
    }),
};
