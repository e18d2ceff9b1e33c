/**
 * The Redis side of the watcher leases (docs/scaling.md): key names, the fencing token's shape and
 * the three Lua scripts that change a lease. Each script is one atomic step, so a token is only
 * consumed when the lease is taken, and a renew or release only ever touches the caller's own lease.
 *
 * Every key carries the `{live}` hash tag, like the rest of the live path: in a Redis Cluster they
 * share one slot, so the event log's append script can read a lease key beside the stream it writes.
 */
import { createHash } from 'node:crypto';
import type { RedisClient } from '../redis-client';

/** `<prefix>{live}:lease:<backend>`: the fencing token of the backend's watcher, with the lease's TTL. */
export const leaseKey = (prefix: string, backend: string): string => `${prefix}{live}:lease:${backend}`;

/** `<prefix>{live}:fence:<backend>`: the backend's fencing counter; never expires. */
export const fenceKey = (prefix: string, backend: string): string => `${prefix}{live}:fence:${backend}`;

/** A fencing token, `<n>:<replicaId>`, taken apart; null when `token` does not have that shape. */
export function parseFenceToken(token: string): { n: bigint; replicaId: string } | null {
  const m = /^(\d{1,20}):(.+)$/s.exec(token);
  return m ? { n: BigInt(m[1]!), replicaId: m[2]! } : null;
}

/** What the lease key holds while nobody may take it after Redis lost its data (see {@link ACQUIRE}). */
export const RESET_HOLD = '0:(redis-reset)';

/**
 * Takes the lease when it is free, or when it still holds `ARGV[3]` (this replica's own token from
 * before: after a local loss, the replica takes it back under a new token, so writes still in flight
 * under the old one are fenced off). The counter is INCRed only then.
 *
 * A missing counter means a first use or a Redis that lost its data. After a loss, a holder from
 * before may still count itself the holder until its local deadline (at most a TTL), so nobody may
 * take the lease for one TTL: the key is set to {@link RESET_HOLD} instead, and the old holder's next
 * renew finds it taken. The counter restarts from Redis's clock in ms, so tokens keep growing across
 * a restart without persistence (as long as fewer than one lease per ms was taken before).
 *
 * KEYS: lease, fence. ARGV: replica id, TTL ms, previous token ('' for none).
 * Returns `{1, token, ttl}` when taken, `{0, holder's token, its PTTL}` when not.
 */
export const ACQUIRE = `
local current = redis.call('GET', KEYS[1])
if current and current ~= ARGV[3] then
  return {0, current, redis.call('PTTL', KEYS[1])}
end
if redis.call('EXISTS', KEYS[2]) == 0 then
  local t = redis.call('TIME')
  redis.call('SET', KEYS[2], string.format('%d', tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)))
  redis.call('SET', KEYS[1], '${RESET_HOLD}', 'PX', ARGV[2])
  return {0, '${RESET_HOLD}', tonumber(ARGV[2])}
end
local token = redis.call('INCR', KEYS[2]) .. ':' .. ARGV[1]
redis.call('SET', KEYS[1], token, 'PX', ARGV[2])
return {1, token, tonumber(ARGV[2])}
`;

/**
 * Extends the lease only while it still holds the caller's token.
 * KEYS: lease. ARGV: token, TTL ms. Returns `{1}` when extended, `{0, holder's token or false}` when not.
 */
export const RENEW = `
local current = redis.call('GET', KEYS[1])
if current == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return {1}
end
return {0, current}
`;

/** Deletes the lease only while it still holds the caller's token. KEYS: lease. ARGV: token. Returns 1 when deleted. */
export const RELEASE = `
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0
`;

const shas = new Map<string, string>();
const sha1 = (script: string): string => {
  let sha = shas.get(script);
  if (!sha) shas.set(script, (sha = createHash('sha1').update(script).digest('hex')));
  return sha;
};

/**
 * Runs `script` by its SHA (EVALSHA), loading it with EVAL when Redis does not know it (first use,
 * or after a restart). Does not add commands to the caller's client, which other code shares.
 */
export async function runScript(client: RedisClient, script: string, keys: string[], args: string[]): Promise<unknown> {
  try {
    return await client.evalsha(sha1(script), keys.length, ...keys, ...args);
  } catch (err) {
    if (!(err instanceof Error) || !err.message.startsWith('NOSCRIPT')) throw err;
    return client.eval(script, keys.length, ...keys, ...args);
  }
}
