/**
 * The OpenStack backend's health probe. With a service credential it proves Cinder and Nova
 * answer (fresh version documents each time: a cached range would report UP through an outage);
 * without one it can only reach Keystone.
 */
import { timedProbe } from '../contract/health';
import type { BackendHealth } from '../contract/model';
import type { OpenStackClient } from './client';

export function health(client: OpenStackClient, signal?: AbortSignal): Promise<BackendHealth> {
  return timedProbe(async () => {
    if (client.keystone.hasServiceAuth) {
      const s = await client.keystone.serviceSession();
      await Promise.all([client.probe(s, 'volume', signal), client.probe(s, 'compute', signal)]);
      return { up: true, message: null };
    }
    const status = await client.probeKeystone(signal);
    if (status !== 200) return { up: false, message: `Keystone answered ${status}` };
    return { up: true, message: 'Keystone reachable (no service credential: Cinder and Nova not probed)' };
  });
}
