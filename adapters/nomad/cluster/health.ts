/** The Nomad backend's health probe: a cluster leader answers (the call needs no ACL). */
import { timedProbe } from '../../contract/health';
import type { BackendHealth } from '../../contract/model';
import type { NomadContext } from '../context';
import { leader } from './requests';

export function health(ctx: NomadContext, signal?: AbortSignal): Promise<BackendHealth> {
  return timedProbe(async () => {
    const { data } = await leader(ctx.client, { credential: {}, signal });
    return data ? { up: true, message: null } : { up: false, message: 'no cluster leader' };
  });
}
