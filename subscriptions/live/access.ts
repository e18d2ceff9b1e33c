/**
 * Per-subscriber authorization, cached briefly: may this credential read volumes of this backend's
 * scope (Nomad namespace, OpenStack project)? The key is (sha256 of the credential's token,
 * backend, scope), so answers are never shared across credentials; concurrent misses of one key
 * share one check (single-flight). A grant lives `ttlMs` at most (capped by its `validUntil`), so a
 * revoked token stops receiving events within the TTL.
 *
 * Backends answer with their own check (`SubscriberAccess`: Nomad reads the volume with the
 * subscriber's token, OpenStack validates it and compares projects and roles). A backend without
 * one is never served from a watcher: its grant is always denied, since nothing would say which
 * of the watcher's fields a subscriber may see.
 */
import { createHash } from 'node:crypto';
import type { VolumeBackend } from '../../adapters/contract/backend';
import type { CallerCredential } from '../../adapters/contract/call-options';
import { UnauthenticatedError } from '../../adapters/contract/errors';
import type { VolumeRef, Volume } from '../../adapters/contract/model';
import type { AccessGrant, SubscriberAccess } from '../../adapters/contract/watch';

/** The cache's defaults; the `live.accessTtlMs` setting takes its default from here. */
export const ACCESS_DEFAULTS = Object.freeze({ ttlMs: 30_000, timeoutMs: 10_000 });

/** Options of {@link AccessCache}. */
export interface AccessCacheOptions {
  /** Longest a grant is reused, in ms (a grant's `validUntil` may shorten it). @default {@link ACCESS_DEFAULTS} (30000) */
  ttlMs?: number;
  /** Deadline of one check, in ms. @default {@link ACCESS_DEFAULTS} (10000) */
  timeoutMs?: number;
  /** Called once per check sent to a backend, with its outcome (metrics). */
  onCheck?: (backend: string, outcome: 'allowed' | 'denied' | 'unauthenticated' | 'failed') => void;
  /** The clock. @default Date.now */
  now?: () => number;
}

/** A check's answer: a grant, or the credential is invalid (the backend leaves the subscription). */
export type AccessAnswer = AccessGrant | UnauthenticatedError;

/**
 * A subscription start's credential check: the backend knows the credential (`valid`), refuses it,
 * or could not tell (`unknown`: it failed to answer, or it has no `SubscriberAccess`).
 */
export type CredentialAnswer = 'valid' | 'unknown' | UnauthenticatedError;

const DENIED: AccessGrant = { allowed: false, admin: false };

type Entry = { grant: AccessGrant; until: number } | { pending: Promise<AccessAnswer> };

const sha256 = (token: string): string => createHash('sha256').update(token).digest('base64url');
const ANONYMOUS = sha256('');
/**
 * Hashes by credential object: a subscriber's credential is one object for the subscription's
 * life, so each is hashed once, not once per event delivered (fan-out asks per subscriber). Weak,
 * so nothing outlives the credential; the token is kept beside the hash so that a credential
 * object whose token changed is hashed again rather than answered with the old token's hash.
 */
const hashes = new WeakMap<CallerCredential, { token: string; hash: string }>();

/** The hash a cache key holds instead of the token. */
export function tokenHash(c: CallerCredential): string {
  if (!c.token) return ANONYMOUS;
  const known = hashes.get(c);
  if (known?.token === c.token) return known.hash;
  const hash = sha256(c.token);
  hashes.set(c, { token: c.token, hash });
  return hash;
}

export class AccessCache {
  readonly #entries = new Map<string, Entry>();
  /** Credentials a backend knew (by token hash and backend): until when, or the check in flight. */
  readonly #credentials = new Map<string, { until: number } | { pending: Promise<CredentialAnswer> }>();
  readonly #ttlMs: number;
  readonly #timeoutMs: number;
  readonly #now: () => number;
  readonly #onCheck?: AccessCacheOptions['onCheck'];

  constructor(o: AccessCacheOptions = {}) {
    this.#ttlMs = o.ttlMs ?? ACCESS_DEFAULTS.ttlMs;
    this.#timeoutMs = o.timeoutMs ?? ACCESS_DEFAULTS.timeoutMs;
    this.#now = o.now ?? Date.now;
    this.#onCheck = o.onCheck;
  }

  /**
   * The cached answer for (credential, backend, scope) when there is a fresh one (synchronous, the
   * common case), else a promise of the check's answer. Failures other than an invalid credential
   * deny this event and are not cached (the next event asks again).
   */
  get(
    b: VolumeBackend,
    scope: string,
    volume: VolumeRef,
    credential: CallerCredential,
  ): AccessAnswer | Promise<AccessAnswer> {
    const key = `${tokenHash(credential)}\0${b.id}\0${scope}`;
    const e = this.#entries.get(key);
    if (e && 'pending' in e) return e.pending;
    if (e && e.until > this.#now()) return e.grant;
    const pending = this.#check(b, scope, volume, credential).then((answer) => {
      if (answer instanceof UnauthenticatedError) this.#entries.delete(key);
      else if ('failed' in answer) {
        this.#entries.delete(key);
        return DENIED;
      } else
        this.#entries.set(key, {
          grant: answer,
          until: Math.min(this.#now() + this.#ttlMs, answer.validUntil ?? Infinity),
        });
      return answer;
    });
    this.#entries.set(key, { pending });
    return pending;
  }

  /**
   * Does `b` know `credential`? A fresh `valid` answer is reused for the TTL (synchronous); a miss
   * first asks `admit` (the caller's check budget), whose refusal is returned as is and sends
   * nothing; concurrent misses share one check. Refusals and failures are not cached.
   */
  credential<R>(
    b: VolumeBackend,
    credential: CallerCredential,
    admit: () => R | undefined,
  ): CredentialAnswer | R | Promise<CredentialAnswer> {
    const access = b.subscriberAccess;
    if (!access) return 'unknown';
    const key = `${tokenHash(credential)}\0${b.id}`;
    const e = this.#credentials.get(key);
    if (e && 'pending' in e) return e.pending;
    if (e && e.until > this.#now()) return 'valid';
    const refused = admit();
    if (refused !== undefined) return refused;
    const pending = this.#checkCredential(b.id, access, credential).then((answer) => {
      if (answer === 'valid') this.#credentials.set(key, { until: this.#now() + this.#ttlMs });
      else this.#credentials.delete(key);
      return answer;
    });
    this.#credentials.set(key, { pending });
    return pending;
  }

  /** Entries held (fresh, stale or in flight). */
  get size(): number {
    return this.#entries.size + this.#credentials.size;
  }

  /** Drops stale entries (called now and then, so a cache of gone subscribers does not grow). */
  sweep(): void {
    const now = this.#now();
    for (const [k, e] of this.#entries) if ('until' in e && e.until <= now) this.#entries.delete(k);
    for (const [k, e] of this.#credentials) if ('until' in e && e.until <= now) this.#credentials.delete(k);
  }

  async #checkCredential(
    backend: string,
    access: SubscriberAccess,
    credential: CallerCredential,
  ): Promise<CredentialAnswer> {
    try {
      await access.checkCredential({ credential, signal: AbortSignal.timeout(this.#timeoutMs) });
      this.#onCheck?.(backend, 'allowed');
      return 'valid';
    } catch (err) {
      if (err instanceof UnauthenticatedError) {
        this.#onCheck?.(backend, 'unauthenticated');
        return err;
      }
      this.#onCheck?.(backend, 'failed');
      return 'unknown';
    }
  }

  async #check(
    b: VolumeBackend,
    scope: string,
    volume: VolumeRef,
    credential: CallerCredential,
  ): Promise<AccessGrant | UnauthenticatedError | { failed: true }> {
    const signal = AbortSignal.timeout(this.#timeoutMs);
    try {
      const grant = b.subscriberAccess
        ? await b.subscriberAccess.checkAccess(scope, volume, { credential, signal })
        : DENIED;
      this.#onCheck?.(b.id, grant.allowed ? 'allowed' : 'denied');
      return grant;
    } catch (err) {
      if (err instanceof UnauthenticatedError) {
        this.#onCheck?.(b.id, 'unauthenticated');
        return err;
      }
      this.#onCheck?.(b.id, 'failed');
      return { failed: true };
    }
  }
}

/** The volume as a subscriber with `grant` may see it (only backends with the `subscriberAccess` facet are ever granted). */
export function redactFor(b: VolumeBackend, v: Volume, grant: AccessGrant): Volume {
  return b.subscriberAccess ? b.subscriberAccess.redact(v, grant) : v;
}
