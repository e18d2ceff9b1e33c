/**
 * Tells whether Redis lost its data since this process last looked: a marker key, written once
 * (by whichever replica comes first) and never expiring, is read on every (re)connect. Gone, or
 * replaced by another replica that found it gone, means every key written before is gone too
 * (a restart without persistence, a flush, an eviction).
 */
import { randomUUID } from 'node:crypto';
import type { RedisClient } from '../../subscriptions/redis-client';

/** What a check found. */
export interface MarkerCheck {
  /** The marker now in Redis: the one to compare with next time. */
  marker: string;
  /** The marker differs from the one known before (never on the first check). */
  lost: boolean;
}

/** Reads the marker, writing a new one when there is none; `known` is the marker seen last (null the first time). */
export async function checkMarker(client: RedisClient, key: string, known: string | null): Promise<MarkerCheck> {
  const fresh = randomUUID();
  const created = (await client.set(key, fresh, 'NX')) === 'OK';
  let marker = created ? fresh : await client.get(key);
  // Gone between the two commands: RedisClient is losing data right now.
  if (marker === null) {
    await client.set(key, fresh);
    marker = fresh;
  }
  return { marker, lost: known !== null && marker !== known };
}
