/**
 * The Redis event log's Lua scripts (redis-log.ts). Every key is in the `{live}` hash tag, so each
 * script touches one Cluster slot. Both scripts first make sure the log has an identity: a log-id
 * key missing while the stream exists means the stream is not this log's (the id was lost or
 * evicted), so the stream is deleted and a new log starts; cursors of the old one then expire.
 */
import type { RedisClient } from '../redis-client';

/**
 * Makes sure the log has an id (ARGV[1] when new): `logId` is set. KEYS[1] stream, KEYS[2] log id,
 * KEYS[3] the holds (a new log drops the old one's: their positions name nothing in it).
 */
const ENSURE_ID = `
local logId = redis.call('GET', KEYS[2])
if not logId then
  redis.call('DEL', KEYS[1], KEYS[3])
  logId = ARGV[1]
  redis.call('SET', KEYS[2], logId)
end
`;

/** Stream id order in Lua: whether the id a comes before b. */
const BEFORE = `
local function parts(id)
  local ms, seq = string.match(id, '^(%d+)-(%d+)$')
  return tonumber(ms), tonumber(seq)
end
local function before(a, b)
  local am, as = parts(a)
  local bm, bs = parts(b)
  return am < bm or (am == bm and as < bs)
end
`;

/**
 * Entries past the count cap are read to find where the cap cuts only once this many pile up (or
 * the cap's own count, when smaller), so that range read is paid once per about this many appends:
 * approximate, as `MAXLEN ~` is.
 */
export const TRIM_SLACK = 200;

/**
 * Appends ARGV[10..] (JSON) to the stream, fenced when ARGV[8] is '1' (GET KEYS[4] == ARGV[4]), and
 * sets the next key (KEYS[4], or KEYS[5] when fenced) to ARGV[9] for a day (longer than any memory
 * it holds lasts) when that is not empty, then trims
 * the stream (approximately: `MINID ~` drops whole macro nodes) below the newest of the age cut
 * (ids below ARGV[3] ms) and the count cap (ARGV[2] entries, applied once ARGV[7] more pile up),
 * but never past a hold: KEYS[3] maps a holder to "<id> <written ms>", and a hold written after
 * ARGV[5] - ARGV[6] keeps its id and everything after it (older holds are dropped).
 * Answers {0} when the fence does not hold (nothing written), else {1, logId, id...}. The last key
 * names this append (a random id per call): its answer is kept there for a minute and given again,
 * without appending, when the same append comes twice (ioredis re-sends a command that was in
 * flight when its connection dropped, and a Cluster redirect is retried), so an append that ran
 * before a failover is not appended again after it.
 */
const APPEND = `
local done = redis.call('GET', KEYS[#KEYS])
if done then return cjson.decode(done) end
local k = 4
if ARGV[8] == '1' then
  if redis.call('GET', KEYS[k]) ~= ARGV[4] then return {0} end
  k = k + 1
end
${ENSURE_ID}
${BEFORE}
if ARGV[9] ~= '' then redis.call('SET', KEYS[k], ARGV[9], 'PX', 86400000) end
local out = {1, logId}
for i = 10, #ARGV do
  out[#out + 1] = redis.call('XADD', KEYS[1], '*', 'e', ARGV[i])
end
redis.call('SET', KEYS[#KEYS], cjson.encode(out), 'PX', 60000)
if #ARGV < 10 then return out end
local cut = ARGV[3] .. '-0'
local cap = tonumber(ARGV[2])
local len = redis.call('XLEN', KEYS[1])
if len > cap + tonumber(ARGV[7]) then
  local r = redis.call('XRANGE', KEYS[1], '-', '+', 'COUNT', len - cap + 1)
  local keep = r[#r][1]
  if before(cut, keep) then cut = keep end
end
local holds = redis.call('HGETALL', KEYS[3])
local oldest = tonumber(ARGV[5]) - tonumber(ARGV[6])
for i = 1, #holds, 2 do
  local id, at = string.match(holds[i + 1], '^(%d+-%d+) (%d+)$')
  if id and tonumber(at) >= oldest then
    if before(id, cut) then cut = id end
  else
    redis.call('HDEL', KEYS[3], holds[i])
  end
end
redis.call('XTRIM', KEYS[1], 'MINID', '~', cut)
return out
`;

/**
 * Records the hold ARGV[2] = "<id> <written ms>" of the holder ARGV[3] when KEYS[2] is still the
 * log ARGV[1] and the id ARGV[4] names a position it has: its own entry, or its newest id (a new or
 * emptied stream). Answers 1 when recorded; 0 for a lost log, or an id a failover lost.
 */
const HOLD = `
if redis.call('GET', KEYS[2]) ~= ARGV[1] then return 0 end
local last = '0-0'
if redis.call('EXISTS', KEYS[1]) == 1 then
  local info = redis.call('XINFO', 'STREAM', KEYS[1])
  for i = 1, #info, 2 do if info[i] == 'last-generated-id' then last = info[i + 1] end end
end
if ARGV[4] ~= last and #redis.call('XRANGE', KEYS[1], ARGV[4], ARGV[4]) == 0 then return 0 end
redis.call('HSET', KEYS[3], ARGV[3], ARGV[2])
return 1
`;

/**
 * The log's state and, when ARGV[2] is the log id, the entries after the id ARGV[3] (at most
 * ARGV[4]) and whether ARGV[3]'s own entry is there, read together so that no trim falls between
 * the check and the read. Answers {logId, last-generated-id, max-deleted-entry-id, entries-added,
 * entries, length, recorded-first-entry-id, own entry (1 there, 0 not, -1 not asked), run_id}.
 * (Redis 7.0 records trims in `recorded-first-entry-id` only; `max-deleted-entry-id` moves on
 * XDEL.) The server's `run_id` tells a failover (another primary) apart from the same server.
 */
const READ = `
${ENSURE_ID}
local runId = string.match(redis.call('INFO', 'server'), 'run_id:(%w+)') or ''
if redis.call('EXISTS', KEYS[1]) == 0 then return {logId, '0-0', '0-0', 0, {}, 0, '0-0', -1, runId} end
local info = redis.call('XINFO', 'STREAM', KEYS[1])
local f = {}
for i = 1, #info, 2 do f[info[i]] = info[i + 1] end
local entries = {}
local own = -1
if ARGV[2] == logId then
  entries = redis.call('XRANGE', KEYS[1], '(' .. ARGV[3], '+', 'COUNT', ARGV[4])
  if ARGV[3] ~= '0-0' then own = #redis.call('XRANGE', KEYS[1], ARGV[3], ARGV[3]) end
end
return {logId, f['last-generated-id'], f['max-deleted-entry-id'], f['entries-added'], entries, f['length'], f['recorded-first-entry-id'], own, runId}
`;

/** A stream entry as XRANGE answers it: id, then field-value pairs. */
export type RawEntry = [id: string, fields: string[]];

/** What the read script answers. */
export interface LogState {
  logId: string;
  /** The stream's newest id ever generated (`0-0` for a new log). */
  lastId: string;
  /** The newest id trimmed away (`0-0` when nothing was). */
  maxDeletedId: string;
  /** Entries ever added to the stream. */
  entriesAdded: number;
  entries: RawEntry[];
  /** Entries in the stream now. */
  length: number;
  /** The id of the first entry kept (`0-0` while empty). */
  firstId: string;
  /** Whether the entry the read started after is in the stream (null: not asked, at `0-0` or another log). */
  ownEntry: boolean | null;
  /** The answering server's `run_id`: it changes when another primary answers (a failover) or the server restarted. */
  runId: string;
}

interface LogScripts {
  vgEventLogAppend(...args: (string | number)[]): Promise<[0] | [1, string, ...string[]]>;
  vgEventLogRead(
    ...args: (string | number)[]
  ): Promise<[string, string, string, number, RawEntry[], number, string, number, string]>;
  vgEventLogHold(...args: (string | number)[]): Promise<0 | 1>;
}

/** A client with the scripts defined (idempotent: ioredis keeps them per client). */
function scripted(client: RedisClient): RedisClient & LogScripts {
  const c = client as RedisClient & Partial<LogScripts>;
  if (!c.vgEventLogAppend) client.defineCommand('vgEventLogAppend', { lua: APPEND });
  if (!c.vgEventLogRead) client.defineCommand('vgEventLogRead', { numberOfKeys: 3, lua: READ });
  if (!c.vgEventLogHold) client.defineCommand('vgEventLogHold', { numberOfKeys: 3, lua: HOLD });
  return client as RedisClient & LogScripts;
}

/** The log's keys. */
export interface LogKeys {
  stream: string;
  logId: string;
  /** Positions trimming must not pass, by holder (a view snapshot's, per backend). */
  holds: string;
}

/** Appends `payloads` (and writes `keep`); null when the fence did not hold, else the log id and the new ids. */
export async function appendScript(
  client: RedisClient,
  keys: LogKeys,
  a: {
    newLogId: string;
    maxEvents: number;
    minId: number;
    /** Now, and how long a hold lasts unless rewritten (ms). */
    now: number;
    holdMs: number;
    fence?: { key: string; token: string };
    keep?: { key: string; value: string };
    /** This append's own key (`<prefix>{live}:append:<random>`), so that a re-sent append is not appended twice. */
    onceKey: string;
    payloads: string[];
  },
): Promise<{ logId: string; ids: string[] } | null> {
  const extra = [...(a.fence ? [a.fence.key] : []), ...(a.keep ? [a.keep.key] : []), a.onceKey];
  const r = await scripted(client).vgEventLogAppend(
    3 + extra.length,
    keys.stream,
    keys.logId,
    keys.holds,
    ...extra,
    a.newLogId,
    a.maxEvents,
    Math.max(0, Math.floor(a.minId)),
    a.fence?.token ?? '',
    Math.floor(a.now),
    Math.floor(a.holdMs),
    Math.min(TRIM_SLACK, a.maxEvents),
    a.fence ? '1' : '0',
    a.keep?.value ?? '',
    ...a.payloads,
  );
  if (r[0] === 0) return null;
  const [, logId, ...ids] = r;
  return { logId, ids };
}

/** The log's state, with up to `count` entries after `after` when `epoch` is the log's id. */
export async function readScript(
  client: RedisClient,
  keys: LogKeys,
  a: { newLogId: string; epoch: string; after: string; count: number },
): Promise<LogState> {
  const [logId, lastId, maxDeletedId, entriesAdded, entries, length, firstId, own, runId] = await scripted(
    client,
  ).vgEventLogRead(keys.stream, keys.logId, keys.holds, a.newLogId, a.epoch, a.after, a.count);
  return {
    logId,
    lastId,
    maxDeletedId,
    entriesAdded: Number(entriesAdded),
    entries,
    length: Number(length),
    firstId,
    ownEntry: Number(own) < 0 ? null : Number(own) > 0,
    runId,
  };
}

/** Records that trimming must not pass the stream id `id` for `holder`; false when the log is no longer `logId` or lost `id` (a failover). */
export async function holdScript(
  client: RedisClient,
  keys: LogKeys,
  a: { logId: string; holder: string; id: string; now: number },
): Promise<boolean> {
  const r = await scripted(client).vgEventLogHold(
    keys.stream,
    keys.logId,
    keys.holds,
    a.logId,
    `${a.id} ${Math.floor(a.now)}`,
    a.holder,
    a.id,
  );
  return r === 1;
}
