/** Builds one `VolumeBackend` per configured backend, each through its kind's module. */
import { BREAKER_DEFAULTS, BreakerBoard, type BreakerOptions } from '../adapters/contract/breaker';
import { KIND_NAMES, moduleForKind } from './kinds';
import type { CallRecord } from '../adapters/contract/module';
import type { BackendEntry } from './config';
import { BackendRegistry } from '../domain/registry';

/** How backends are guarded (docs/configuration.md "Circuit breakers"). */
export interface ResilienceOptions {
  /** When breakers open and for how long, for every backend. @default BREAKER_DEFAULTS */
  breaker?: BreakerOptions;
  /** Per-backend deadline of merged lists, ms. @default 5000 */
  listBackendDeadlineMs?: number;
}

/**
 * @param configs as server/config.ts parsed them (each by its module)
 * @throws Error for a kind no module has (config refuses it first)
 */
export function createRegistry(
  configs: readonly BackendEntry[],
  onCall?: (r: CallRecord) => void,
  resilience: ResilienceOptions = {},
): BackendRegistry {
  const breakers = new BreakerBoard(resilience.breaker ?? BREAKER_DEFAULTS);
  const backends = configs.map((c) => {
    const module = moduleForKind(c.kind);
    if (!module) throw new Error(`backend ${c.id}: no module for kind ${JSON.stringify(c.kind)}`);
    return module.create(c, { onCall, breakers });
  });
  return new BackendRegistry(backends, {
    breakers,
    listBackendDeadlineMs: resilience.listBackendDeadlineMs,
    kinds: KIND_NAMES,
  });
}
