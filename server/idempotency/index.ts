/**
 * Idempotency keys for creating mutations: a create retried with the same key by the same caller
 * returns the first result instead of creating again. Writes are never retried blindly by the
 * gateway, so this is how clients retry safely (docs/schema.md).
 */
import { createHash } from 'node:crypto';
import { ConflictError, IdempotencyKeyReusedError } from '../../adapters/errors';
import { safeText } from '../../adapters/input';
import type { CallerCredential } from '../../adapters/backend';
import type { IdempotencyStore } from './store';

export { MemoryIdempotencyStore, type IdempotencyEntry, type IdempotencyStore } from './store';

/** How long a key is remembered. */
export const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000;

/** Who is asking and for what: a key is scoped to all of these. */
export interface IdempotencyScope {
  backend: string;
  credential: CallerCredential;
  /** The mutation's name. */
  mutation: string;
}

const hash = (parts: unknown[]): string => createHash('sha256').update(JSON.stringify(parts)).digest('base64url');

/**
 * Runs `create` once per (scope, key). Without a key it just runs. With one:
 * - first use: runs it and remembers its (JSON) result;
 * - again with the same input after it finished: returns the remembered result;
 * - again while the first still runs: CONFLICT (retryable);
 * - again with a different input: IDEMPOTENCY_KEY_REUSED.
 * A failed create frees the key, so a retry runs again.
 */
export async function idempotent<T>(store: IdempotencyStore, scope: IdempotencyScope, key: string | null | undefined, input: unknown, create: () => Promise<T>, argument = 'input.idempotencyKey'): Promise<T> {
  if (key === null || key === undefined) return create();
  const checked = safeText(key, argument, 255);
  const scopedKey = hash([scope.backend, scope.credential.token ?? '', scope.mutation, checked]);
  const fingerprint = hash([input]);
  const found = await store.claim(scopedKey, fingerprint, IDEMPOTENCY_TTL_MS);
  if (found) {
    if (found.fingerprint !== fingerprint) throw new IdempotencyKeyReusedError(argument);
    if (found.state === 'pending') throw new ConflictError('a request with this idempotency key is still running; retry when it has finished', { retryable: true });
    return found.result as T;
  }
  try {
    const result = await create();
    await store.complete(scopedKey, { fingerprint, state: 'done', result }, IDEMPOTENCY_TTL_MS);
    return result;
  } catch (err) {
    await store.release(scopedKey);
    throw err;
  }
}
