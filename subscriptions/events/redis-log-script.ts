/**
 * The Redis event log's Lua scripts (redis-log.ts). Every key is in the `{live}` hash tag, so each
 * script touches one Cluster slot. Both scripts first make sure the log has an identity: a log-id
 * key missing while the stream exists means the stream is not this log's (the id was lost or
 * evicted), so the stream is deleted and a new log starts; cursors of the old one then expire.
 */
import type { Redis } from 'ioredis';

/** Makes sure the log has an id (ARGV[1] when new): `logId` is set. KEYS[1] stream, KEYS[2] log id. */
const ENSURE_ID = `
local logId = redis.call('GET', KEYS[2])
if not logId then
  redis.call('DEL', KEYS[1])
  logId = ARGV[1]
  redis.call('SET', KEYS[2], logId)
end
`;

/**
 * Appends ARGV[5..] (JSON) to the stream, fenced by GET KEYS[3] == ARGV[4] when there is a KEYS[3],
 * capped at ARGV[2] entries and trimmed below the id ARGV[3] (both approximately: whole macro nodes).
 * Answers {0} when the fence does not hold (nothing written), else {1, logId, id...}.
 */
const APPEND = `
if #KEYS == 3 and redis.call('GET', KEYS[3]) ~= ARGV[4] then return {0} end
${ENSURE_ID}
local out = {1, logId}
for i = 5, #ARGV do
  out[#out + 1] = redis.call('XADD', KEYS[1], 'MAXLEN', '~', ARGV[2], '*', 'e', ARGV[i])
end
redis.call('XTRIM', KEYS[1], 'MINID', '~', ARGV[3])
return out
`;

/**
 * The log's state and, when ARGV[2] is the log id, the entries after the id ARGV[3] (at most
 * ARGV[4]), read together so that no trim falls between the check and the read. Answers
 * {logId, last-generated-id, max-deleted-entry-id, entries-added, entries, length,
 * recorded-first-entry-id}. (Redis 7.0 records trims in `recorded-first-entry-id` only;
 * `max-deleted-entry-id` moves on XDEL.)
 */
const READ = `
${ENSURE_ID}
if redis.call('EXISTS', KEYS[1]) == 0 then return {logId, '0-0', '0-0', 0, {}, 0, '0-0'} end
local info = redis.call('XINFO', 'STREAM', KEYS[1])
local f = {}
for i = 1, #info, 2 do f[info[i]] = info[i + 1] end
local entries = {}
if ARGV[2] == logId then
  entries = redis.call('XRANGE', KEYS[1], '(' .. ARGV[3], '+', 'COUNT', ARGV[4])
end
return {logId, f['last-generated-id'], f['max-deleted-entry-id'], f['entries-added'], entries, f['length'], f['recorded-first-entry-id']}
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
}

interface LogScripts {
  vgEventLogAppend(...args: (string | number)[]): Promise<[0] | [1, string, ...string[]]>;
  vgEventLogRead(...args: (string | number)[]): Promise<[string, string, string, number, RawEntry[], number, string]>;
}

/** A client with the scripts defined (idempotent: ioredis keeps them per client). */
function scripted(client: Redis): Redis & LogScripts {
  const c = client as Redis & Partial<LogScripts>;
  if (!c.vgEventLogAppend) client.defineCommand('vgEventLogAppend', { lua: APPEND });
  if (!c.vgEventLogRead) client.defineCommand('vgEventLogRead', { numberOfKeys: 2, lua: READ });
  return client as Redis & LogScripts;
}

/** The log's keys. */
export interface LogKeys {
  stream: string;
  logId: string;
}

/** Appends `payloads`; null when the fence did not hold, else the log id and the new ids. */
export async function appendScript(
  client: Redis,
  keys: LogKeys,
  a: { newLogId: string; maxEvents: number; minId: number; fence?: { key: string; token: string }; payloads: string[] },
): Promise<{ logId: string; ids: string[] } | null> {
  const fenceKeys = a.fence ? [a.fence.key] : [];
  const r = await scripted(client).vgEventLogAppend(
    2 + fenceKeys.length,
    keys.stream,
    keys.logId,
    ...fenceKeys,
    a.newLogId,
    a.maxEvents,
    Math.max(0, Math.floor(a.minId)),
    a.fence?.token ?? '',
    ...a.payloads,
  );
  if (r[0] === 0) return null;
  const [, logId, ...ids] = r;
  return { logId, ids };
}

/** The log's state, with up to `count` entries after `after` when `epoch` is the log's id. */
export async function readScript(
  client: Redis,
  keys: LogKeys,
  a: { newLogId: string; epoch: string; after: string; count: number },
): Promise<LogState> {
  const [logId, lastId, maxDeletedId, entriesAdded, entries, length, firstId] = await scripted(client).vgEventLogRead(
    keys.stream,
    keys.logId,
    a.newLogId,
    a.epoch,
    a.after,
    a.count,
  );
  return {
    logId,
    lastId,
    maxDeletedId,
    entriesAdded: Number(entriesAdded),
    entries,
    length: Number(length),
    firstId,
  };
}
