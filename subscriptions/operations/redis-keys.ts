/**
 * The Redis keys of shared operation records (docs/scaling.md). Every one carries the `{live}`
 * hash tag of the live path, so the fenced write (one Lua script reading and writing a record, its
 * target's set, the running index and the change stream) stays in one Redis Cluster slot.
 */

/** Default key prefix (`REDIS_KEY_PREFIX`). */
export const DEFAULT_REDIS_KEY_PREFIX = 'vg:';

/** The keys under one prefix. */
export class OperationKeys {
  constructor(readonly prefix: string = DEFAULT_REDIS_KEY_PREFIX) {}

  /** A record: a hash of `v` (version), `s` (state), `d` (driving replica, empty once terminal), `j` (the record as JSON). */
  record(id: string): string {
    return `${this.prefix}{live}:operation:${id}`;
  }

  /** A target's set of record ids. */
  target(targetId: string): string {
    return `${this.prefix}{live}:operation-target:${targetId}`;
  }

  /** Running records by deadline (a sorted set of ids): what the hand-over sweep reads. */
  get running(): string {
    return `${this.prefix}{live}:operations-running`;
  }

  /** Every stored change, in order (a stream, trimmed to a few thousand entries). */
  get stream(): string {
    return `${this.prefix}{live}:operations`;
  }

  /** A replica's liveness key, refreshed while it runs and deleted on shutdown. */
  replica(id: string): string {
    return `${this.prefix}{live}:replica:${id}`;
  }
}

/**
 * The fenced write. KEYS: record, target set, running index, stream. ARGV: expected version, JSON,
 * state, driver ('' for none), TTL ms, deadline, '1' when terminal, id, stream MAXLEN, writer.
 * Returns {1, new version} or {0, stored version, stored driver}: refused when the stored copy is
 * terminal or at another version. A missing record (expired, or lost with Redis' data) is written back.
 */
export const FENCED_WRITE = `
local cur = redis.call('HMGET', KEYS[1], 'v', 's', 'd')
local v = tonumber(cur[1])
if v then
  if cur[2] == 'SUCCEEDED' or cur[2] == 'FAILED' or cur[2] == 'TIMED_OUT' then return {0, v, ''} end
  if v ~= tonumber(ARGV[1]) then return {0, v, cur[3]} end
else
  v = tonumber(ARGV[1])
end
local nv = v + 1
redis.call('HSET', KEYS[1], 'v', nv, 's', ARGV[3], 'd', ARGV[4], 'j', ARGV[2])
redis.call('PEXPIRE', KEYS[1], ARGV[5])
redis.call('SADD', KEYS[2], ARGV[8])
redis.call('PEXPIRE', KEYS[2], ARGV[5], 'GT')
redis.call('PEXPIRE', KEYS[2], ARGV[5], 'NX')
if ARGV[7] == '1' then
  redis.call('ZREM', KEYS[3], ARGV[8])
else
  redis.call('ZADD', KEYS[3], ARGV[6], ARGV[8])
end
redis.call('XADD', KEYS[4], 'MAXLEN', '~', ARGV[9], '*', 'id', ARGV[8], 'v', nv, 'w', ARGV[10], 'j', ARGV[2])
return {1, nv, ARGV[4]}
`;
