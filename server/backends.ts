/** Builds one `VolumeBackend` per configured backend. */
import type { VolumeBackend } from '../adapters/contract/backend';
import { BREAKER_DEFAULTS, BreakerBoard, type BreakerOptions } from '../adapters/http/breaker';
import { NomadBackend } from '../adapters/nomad/backend';
import { OpenStackBackend } from '../adapters/openstack/backend';
import type { CallRecord } from '../adapters/http/transport';
import type { BackendConfig } from './config';
import { BackendRegistry } from './registry';

/** How backends are guarded (docs/configuration.md "Circuit breakers"). */
export interface ResilienceOptions {
  /** When breakers open and for how long, for every backend. @default BREAKER_DEFAULTS */
  breaker?: BreakerOptions;
  /** Per-backend deadline of merged lists, ms. @default 5000 */
  listBackendDeadlineMs?: number;
}

export function createRegistry(configs: BackendConfig[], onCall?: (r: CallRecord) => void, resilience: ResilienceOptions = {}): BackendRegistry {
  const breakers = new BreakerBoard(resilience.breaker ?? BREAKER_DEFAULTS);
  const backends: VolumeBackend[] = configs.map((c) => {
    switch (c.kind) {
      case 'nomad':
        return new NomadBackend({
          backend: c.id,
          baseUrl: c.url,
          token: c.token,
          timeoutMs: c.timeoutMs,
          maxConnections: c.maxConnections,
          readRetries: c.readRetries,
          onCall,
          breakers,
        });
      case 'openstack':
        return new OpenStackBackend({
          backend: c.id,
          authUrl: c.url,
          region: c.region,
          interface: c.interface,
          serviceAuth: c.auth,
          timeoutMs: c.timeoutMs,
          maxConnections: c.maxConnections,
          readRetries: c.readRetries,
          operationTimeoutMs: c.operationTimeoutMs,
          watchFastMs: c.watchFastMs,
          watchSlowMs: c.watchSlowMs,
          onCall,
          breakers,
        });
    }
  });
  return new BackendRegistry(backends, { breakers, listBackendDeadlineMs: resilience.listBackendDeadlineMs });
}
