/**
 * The OpenStack backend's health probe. With a service credential it proves Cinder and Nova
 * answer (fresh version documents each time: a cached range would report UP through an outage);
 * without one it can only reach Keystone, and probes the breakers of Cinder and Nova that are not
 * closed without a token (`probeOpenServices`). As the background probe (`probe` set) it is what
 * closes this backend's breakers: Keystone's first, which the service session needs.
 */
import type { ProbeCall } from '../contract/call-options';
import { timedProbe } from '../contract/health';
import type { BackendHealth } from '../contract/model';
import type { OpenStackClient } from './client';

export function health(client: OpenStackClient, signal?: AbortSignal, probe?: ProbeCall): Promise<BackendHealth> {
  return timedProbe(async () => {
    const keystone =
      probe !== undefined && client.breaker('identity').state !== 'CLOSED'
        ? await client.probeKeystone(signal, probe)
        : undefined;
    if (client.keystone.hasServiceAuth) {
      const s = await client.keystone.serviceSession();
      await Promise.all([client.probe(s, 'volume', signal, probe), client.probe(s, 'compute', signal, probe)]);
      return { up: true, message: null };
    }
    if (probe) await client.probeOpenServices(signal, probe);
    const status = keystone ?? (await client.probeKeystone(signal, probe));
    if (status !== 200) return { up: false, message: `Keystone answered ${status}` };
    return { up: true, message: 'Keystone reachable (no service credential: Cinder and Nova not probed)' };
  });
}
