/**
 * Idempotency keys for creating mutations: a create retried with the same key by the same caller
 * returns the first result instead of creating again. Writes are never retried blindly by the
 * gateway, so this is how clients retry safely (docs/schema.md).
 */
import { createHash } from 'node:crypto';
import { ConflictError, IdempotencyKeyReusedError } from '../../adapters/contract/errors';
import { safeText } from '../../adapters/contract/input';
import type { CallerCredential } from '../../adapters/contract/backend';
import type { IdempotencyStore } from './store';
import { IDEMPOTENCY_CLAIM_TTL_MS, IDEMPOTENCY_TTL_MS } from './ttl';

export { MemoryIdempotencyStore, type IdempotencyEntry, type IdempotencyStore, type MemoryIdempotencyStoreOptions } from './store';
export { RedisIdempotencyStore, type IdempotencyRecovery, type RedisIdempotencyStoreOptions } from './redis-store';
export { IdempotencyRecoveringError } from './errors';
export { IDEMPOTENCY_CLAIM_TTL_MS, IDEMPOTENCY_TTL_MS } from './ttl';

/** Who is asking and for what: a key is scoped to all of these. */
export interface IdempotencyScope {
  backend: string;
  credential: CallerCredential;
  /** The mutation's name. */
  mutation: string;
}

const hash = (parts: unknown[]): string => createHash('sha256').update(JSON.stringify(parts)).digest('base64url');

/** The input without its secrets: they do not identify the request, and no hash of them is stored. */
function withoutSecrets(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(withoutSecrets);
  if (v === null || typeof v !== 'object') return v;
  return Object.fromEntries(Object.entries(v).filter(([k]) => k !== 'secrets').map(([k, x]) => [k, withoutSecrets(x)]));
}

/**
 * Runs `create` once per (scope, key). Without a key it just runs. With one:
 * - first use: runs it and remembers its (JSON) result;
 * - again with the same input after it finished: returns the remembered result;
 * - again while the first still runs: CONFLICT (retryable);
 * - again with a different input: IDEMPOTENCY_KEY_REUSED.
 * A failed create frees the key, so a retry runs again. A store that cannot claim (Redis down) fails
 * the request before `create` runs, rather than risk creating twice.
 */
export async function idempotent<T>(store: IdempotencyStore, scope: IdempotencyScope, key: string | null | undefined, input: unknown, create: () => Promise<T>, argument = 'input.idempotencyKey'): Promise<T> {
  if (key === null || key === undefined) return create();
  const checked = safeText(key, argument, 255);
  const scopedKey = hash([scope.backend, scope.credential.token ?? '', scope.mutation, checked]);
  const fingerprint = hash([withoutSecrets(input)]);
  const found = await store.claim(scopedKey, fingerprint, IDEMPOTENCY_CLAIM_TTL_MS);
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
