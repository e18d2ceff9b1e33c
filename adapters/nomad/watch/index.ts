/**
 * The Nomad watcher's entry: {@link createWatcher} builds one for a backend, `watcher.ts` is the
 * watcher itself (event stream, resync, blocking-query fallback), `connection.ts` its own
 * connections, `liveness.ts` the heartbeat allowance, `source.ts` the choice of stream or
 * blocking queries, `dirty.ts` the volumes to read again, `view.ts` the live view, `tuning.ts`
 * its settings, and `requests.ts`/`urls.ts` its two long calls.
 */
import type { Breaker } from '../../contract/breaker';
import type { VolumeWatcher, WatcherOptions } from '../../contract/watch';
import type { NomadClient } from '../client';
import { WatchConnection, type WatchConnectionOptions } from './connection';
import type { NomadWatchTuning } from './tuning';
import { NomadWatcher } from './watcher';

export { NomadWatcher } from './watcher';
export type { NomadWatchTuning } from './tuning';

/** What {@link createWatcher} needs of its backend. */
export interface NomadWatcherSource {
  backend: string;
  /** The backend's pooled client (short reads and lists). */
  client: NomadClient;
  /** The backend's breaker: the watcher reports DEGRADED while it is open. */
  breaker: Breaker;
  /** Nomad's base URL, for the watcher's own connections. */
  baseUrl: string;
  onCall?: WatchConnectionOptions['onCall'];
  /** The service token; without one there is no watcher. */
  token?: string;
  tuning?: NomadWatchTuning;
}

/** A watcher reading with the service token on connections of its own; none without a token. */
export function createWatcher(s: NomadWatcherSource, o: WatcherOptions): VolumeWatcher | { unavailable: string } {
  const token = s.token;
  if (!token)
    return {
      unavailable: `backend "${s.backend}" has no service token configured (backends[].token); Nomad without ACLs accepts any value`,
    };
  const connection = new WatchConnection({ backend: s.backend, baseUrl: s.baseUrl, onCall: s.onCall });
  return new NomadWatcher(
    { backend: s.backend, client: s.client, connection, token, breakers: [s.breaker] },
    o,
    s.tuning,
  );
}
