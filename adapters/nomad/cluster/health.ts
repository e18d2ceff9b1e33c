/** The Nomad backend's health probe: a cluster leader answers (the call needs no ACL). */
import type { ProbeCall } from '../../contract/call-options';
import { timedProbe } from '../../contract/health';
import type { BackendHealth } from '../../contract/model';
import type { NomadContext } from '../context';
import { leader } from './requests';

export function health(ctx: NomadContext, signal?: AbortSignal, probe?: ProbeCall): Promise<BackendHealth> {
  return timedProbe(async () => {
    const { data } = await leader(ctx.client, { credential: {}, signal, probe });
    return data ? { up: true, message: null } : { up: false, message: 'no cluster leader' };
  });
}
