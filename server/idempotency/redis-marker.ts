/**
 * Tells whether Redis lost its data since this process last looked.
 * - A marker key, written once (by whichever replica comes first) and never expiring, is read on
 *   every (re)connect. Gone, or replaced by another replica that found it gone or found its own
 *   writes lost, means keys written before may be gone (a restart without persistence, a flush, an
 *   eviction, a failover that dropped the tail).
 * - A failover keeps the marker (it was replicated long before) but may drop the newest writes:
 *   replication is asynchronous. The check also reads the answering server's `run_id` and its
 *   replication history (`INFO replication`): a promoted replica's `master_replid2` is the old
 *   primary's id and `second_repl_offset` where it stopped following it, so a replica can tell
 *   whether its own last write (its position, {@link writePosition}) made it across.
 * Both are read in one script on the marker's key, so on a Cluster they come from the node that
 * holds the `{live}` slot.
 */
import { randomUUID } from 'node:crypto';
import type { RedisClient } from '../../subscriptions/redis-client';

/** A point in a primary's replication history: its replication id and offset. */
export interface ReplicationPosition {
  replid: string;
  offset: number;
}

/** What a check found. */
export interface MarkerCheck {
  /** The marker now in Redis: the one to compare with next time. */
  marker: string;
  /** The marker differs from the one known before (never on the first check). */
  lost: boolean;
  /** The answering server's `run_id` (another one after a failover or a restart). */
  runId: string;
  /** Its replication position now. */
  position: ReplicationPosition;
  /** The history it took over when promoted (`master_replid2`, `second_repl_offset`); null when none. */
  previous: ReplicationPosition | null;
}

/** Marker, run id and replication state in one step. KEYS[1] the marker; ARGV[1] a new marker, used only when there is none. */
const CHECK = `
local m = redis.call('GET', KEYS[1])
if not m then
  redis.call('SET', KEYS[1], ARGV[1])
  m = ARGV[1]
end
local s = redis.call('INFO', 'server')
local r = redis.call('INFO', 'replication')
return {m, string.match(s, 'run_id:(%w+)') or '', string.match(r, 'master_replid:(%w+)') or '',
  string.match(r, 'master_repl_offset:(%d+)') or '0', string.match(r, 'master_replid2:(%w+)') or '',
  string.match(r, 'second_repl_offset:(%-?%d+)') or '-1'}
`;

/** The replication position now (after this client's writes). KEYS[1] any key of the slot. */
const POSITION = `
local r = redis.call('INFO', 'replication')
return {string.match(r, 'master_replid:(%w+)') or '', string.match(r, 'master_repl_offset:(%d+)') or '0'}
`;

interface MarkerScripts {
  vgIdempotencyCheck(key: string, fresh: string): Promise<[string, string, string, string, string, string]>;
  vgIdempotencyPosition(key: string): Promise<[string, string]>;
}

function scripted(client: RedisClient): RedisClient & MarkerScripts {
  const c = client as RedisClient & Partial<MarkerScripts>;
  if (!c.vgIdempotencyCheck) client.defineCommand('vgIdempotencyCheck', { numberOfKeys: 1, lua: CHECK });
  if (!c.vgIdempotencyPosition) client.defineCommand('vgIdempotencyPosition', { numberOfKeys: 1, lua: POSITION });
  return client as RedisClient & MarkerScripts;
}

/** Reads the marker (writing a new one when there is none) and the server's identity; `known` is the marker seen last (null the first time). */
export async function checkMarker(client: RedisClient, key: string, known: string | null): Promise<MarkerCheck> {
  const [marker, runId, replid, offset, replid2, second] = await scripted(client).vgIdempotencyCheck(key, randomUUID());
  return {
    marker,
    lost: known !== null && marker !== known,
    runId,
    position: { replid, offset: Number(offset) },
    previous:
      replid2 && replid2 !== '0'.repeat(40) && Number(second) > 0 ? { replid: replid2, offset: Number(second) } : null,
  };
}

/** Replaces the marker: every other replica finds it changed at its next check and recovers as from a loss. */
export async function replaceMarker(client: RedisClient, key: string): Promise<string> {
  const fresh = randomUUID();
  await client.set(key, fresh);
  return fresh;
}

/** The replication position after this client's writes so far (read on the marker's slot). */
export async function writePosition(client: RedisClient, key: string): Promise<ReplicationPosition> {
  const [replid, offset] = await scripted(client).vgIdempotencyPosition(key);
  return { replid, offset: Number(offset) };
}

/**
 * Whether a write at `mine` is in the history of the server now answering: on the same history at
 * or past it, or on a promoted replica that followed the old primary past it.
 */
export function survived(mine: ReplicationPosition, now: MarkerCheck): boolean {
  if (now.position.replid === mine.replid) return now.position.offset >= mine.offset;
  // `second_repl_offset` is the first offset the promoted replica did NOT take from the old primary.
  return now.previous !== null && now.previous.replid === mine.replid && now.previous.offset > mine.offset;
}
