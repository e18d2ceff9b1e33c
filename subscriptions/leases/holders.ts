/** Reads who holds leases, as RedisClient says now (for `/readyz`): one MULTI of GET and PTTL per lease key. */
import type { RedisClient } from '../redis-client';
import { leaseKey, parseFenceToken, RESET_HOLD } from './scripts';
import type { LeaseHolder } from './options';

/** The holder of each of `backends`' leases; `mine` compares with `replicaId`. Rejects when Redis does not answer. */
export async function readHolders(
  client: RedisClient,
  keyPrefix: string,
  replicaId: string,
  backends: string[],
): Promise<LeaseHolder[]> {
  if (backends.length === 0) return [];
  const multi = client.multi();
  for (const b of backends) multi.get(leaseKey(keyPrefix, b)).pttl(leaseKey(keyPrefix, b));
  const replies = (await multi.exec()) ?? [];
  return backends.map((backend, i) => {
    const [getErr, token] = replies[2 * i] ?? [new Error('no reply to GET')];
    const [pttlErr, pttl] = replies[2 * i + 1] ?? [new Error('no reply to PTTL')];
    const err = getErr ?? pttlErr;
    if (err) throw err instanceof Error ? err : new Error(String(err));
    const t = typeof token === 'string' ? token : null;
    const holder = t === null || t === RESET_HOLD ? null : (parseFenceToken(t)?.replicaId ?? null);
    const msLeft = t !== null && typeof pttl === 'number' && pttl >= 0 ? pttl : null;
    return { backend, replicaId: holder, token: t, msLeft, mine: holder === replicaId };
  });
}
