/** Builds one `VolumeBackend` per configured backend. */
import type { VolumeBackend } from '../adapters/backend';
import { NomadBackend } from '../adapters/nomad/backend';
import { OpenStackBackend } from '../adapters/openstack/backend';
import type { CallRecord } from '../adapters/transport';
import type { BackendConfig } from './config';
import { BackendRegistry } from './registry';

export function createRegistry(configs: BackendConfig[], onCall?: (r: CallRecord) => void): BackendRegistry {
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
        });
    }
  });
  return new BackendRegistry(backends);
}
