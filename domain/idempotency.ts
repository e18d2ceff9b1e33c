/**
 * Idempotency keys for every use case that changes state: a change retried with the same key by the
 * same caller returns the first result instead of changing again. Writes are never retried blindly by the
 * gateway, so this is how clients retry safely (docs/schema.md). The rule and the store's
 * interface are here; the stores (memory, Redis) are the server's (server/idempotency/).
 */
import { createHash } from 'node:crypto';
import { ConflictError, IdempotencyKeyReusedError } from '../adapters/contract/errors';
import { safeText } from '../adapters/contract/input';
import type { CallerCredential } from '../adapters/contract/call-options';
import type { GatewayContext } from './context';

/** How long a key is remembered after its create finished. */
export const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000;

/**
 * How long a claim holds a key while its create runs: longer than any request may run
 * (OPERATION_TIMEOUT_MS is at most 1 h), so only the claim of a replica that died mid-create
 * expires, instead of blocking the key with CONFLICT for a whole day.
 */
export const IDEMPOTENCY_CLAIM_TTL_MS = 60 * 60 * 1000;

/** One remembered request. */
export interface IdempotencyEntry {
  /** Hash of the input the key was first used with. */
  fingerprint: string;
  /** `pending` while the first request runs. */
  state: 'pending' | 'done';
  /** The first request's result (JSON), once done. */
  result?: unknown;
}

/** Storage of idempotency entries: in the process or in Redis (server/idempotency/), chosen by the wiring. */
export interface IdempotencyStore {
  /**
   * Claims `scopedKey` for a new request: returns null when it was free (the caller now owns it),
   * else the entry already there.
   */
  claim(scopedKey: string, fingerprint: string, ttlMs: number): Promise<IdempotencyEntry | null>;
  /** Records the owner's result. Never rejects: the create it follows has happened. */
  complete(scopedKey: string, entry: IdempotencyEntry, ttlMs: number): Promise<void>;
  /** Frees a key whose request failed, so a retry runs again. Never rejects: the request's own error is what the caller needs. */
  release(scopedKey: string): Promise<void>;
}

/** Who is asking and for what: a key is scoped to all of these. */
export interface IdempotencyScope {
  backend: string;
  credential: CallerCredential;
  /** The mutation's name. */
  mutation: string;
}

/** A changing request's idempotency part, as the resolver maps it from the arguments. */
export interface IdempotencyInput {
  /** The mutation's name: keys are scoped to it (and to the backend and caller). */
  mutation: string;
  /** The caller's key; none: the create just runs. */
  key: string | null | undefined;
  /** What identifies the request: the input without its key (secrets are left out of the hash). */
  request: unknown;
  /** The key's argument path, for errors about it. */
  argument: string;
}

const hash = (parts: unknown[]): string => createHash('sha256').update(JSON.stringify(parts)).digest('base64url');

/** The input without its secrets: they do not identify the request, and no hash of them is stored. */
function withoutSecrets(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(withoutSecrets);
  if (v === null || typeof v !== 'object') return v;
  return Object.fromEntries(
    Object.entries(v)
      .filter(([k]) => k !== 'secrets')
      .map(([k, x]) => [k, withoutSecrets(x)]),
  );
}

/**
 * Runs `create` once per (scope, key). Without a key it just runs. With one:
 * - first use: runs it and remembers its (JSON) result;
 * - again with the same input after it finished: returns the remembered result;
 * - again while the first still runs: CONFLICT (retryable);
 * - again with a different input: IDEMPOTENCY_KEY_REUSED.
 * A failed create frees the key, so a retry runs again. A store that cannot claim (Redis down) fails
 * the request before `create` runs, rather than risk creating twice. `argument` is the key's
 * argument path, for errors about it.
 */
export async function idempotent<T>(
  store: IdempotencyStore,
  scope: IdempotencyScope,
  key: string | null | undefined,
  input: unknown,
  create: () => Promise<T>,
  argument: string,
): Promise<T> {
  if (key === null || key === undefined) return create();
  const checked = safeText(key, argument, 255);
  const scopedKey = hash([scope.backend, scope.credential.token ?? '', scope.mutation, checked]);
  const fingerprint = hash([withoutSecrets(input)]);
  const found = await store.claim(scopedKey, fingerprint, IDEMPOTENCY_CLAIM_TTL_MS);
  if (found) {
    if (found.fingerprint !== fingerprint) throw new IdempotencyKeyReusedError(argument);
    if (found.state === 'pending')
      throw new ConflictError('a request with this idempotency key is still running; retry when it has finished', {
        retryable: true,
      });
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

/** Runs `create` once per key of `input`, scoped to the backend and the execution's caller for it; without `input` (or its key) it just runs. */
export function oncePerKey<T>(
  ctx: GatewayContext,
  backend: string,
  input: IdempotencyInput | undefined,
  create: () => Promise<T>,
): Promise<T> {
  if (!input) return create();
  return idempotent(
    ctx.idempotency,
    { backend, credential: ctx.call(backend).credential, mutation: input.mutation },
    input.key,
    input.request,
    create,
    input.argument,
  );
}
