/**
 * Keystone v3: who the caller is and where their services live.
 *
 * - Callers send their own token (`X-Auth-Token`); the gateway validates it against Keystone to
 *   learn its project, expiry and catalog. The answer is cached under a hash of that token only,
 *   so no caller ever sees another's.
 * - The gateway's own credential (password or application credential), when configured, serves
 *   only its probes and watchers: a token issued once and reused until shortly before expiry.
 */
import { createHash } from 'node:crypto';
import { BackendError, UnauthenticatedError } from '../../contract/errors';
import { errorFromResponse } from '../errors';
import { issueToken, validateToken, type KeystoneSend, type ServiceAuth } from './requests';
import { toSession, type Session } from './results';

export interface KeystoneOptions {
  backend: string;
  /** Keystone v3 URL, e.g. `https://keystone.example.com:5000/v3`. */
  authUrl: string;
  /** Region whose endpoints are used. @default 'RegionOne' */
  region: string;
  /** Catalog interface. @default 'public' */
  interface: 'public' | 'internal' | 'admin';
  serviceAuth?: ServiceAuth;
  /** How long a validated caller token is trusted before Keystone is asked again. @default 60000 */
  callerCacheMs?: number;
  send: KeystoneSend;
}

/** Refresh the gateway's own token this long before it expires. */
const REFRESH_MARGIN_MS = 5 * 60_000;
const MAX_CACHED_CALLERS = 1000;

const hash = (token: string): string => createHash('sha256').update(token).digest('base64url');

export class Keystone {
  readonly #o: KeystoneOptions;
  readonly #callers = new Map<string, { session: Session; until: number }>();
  /** Validations in flight, by token hash. */
  readonly #validating = new Map<string, Promise<Session>>();
  #service: Promise<Session> | null = null;
  /** The resolved service session, so {@link forget} can tell its token apart without awaiting. */
  #serviceResolved: Session | null = null;

  constructor(o: KeystoneOptions) {
    this.#o = o;
  }

  get hasServiceAuth(): boolean {
    return this.#o.serviceAuth !== undefined;
  }

  /**
   * The caller's session; throws UNAUTHENTICATED for a missing, invalid or expired token. `fresh`
   * skips the cached validation (a revoked token is then noticed at once; subscribers' access
   * checks ask for it, once per access-cache TTL).
   */
  async callerSession(token: string | undefined, fresh = false): Promise<Session> {
    const backend = this.#o.backend;
    if (!token)
      throw new UnauthenticatedError(
        `backend "${backend}" (OpenStack) needs the caller's Keystone token: send X-Auth-Token`,
        { backend },
      );
    const now = Date.now();
    // The gateway's own token was issued by Keystone moments ago: no validation round trip (watchers).
    const own = this.#serviceResolved;
    if (own && own.token === token && own.expiresAt > now) return own;
    const key = hash(token);
    const hit = fresh ? undefined : this.#callers.get(key);
    if (hit && hit.until > now) return hit.session;
    this.#callers.delete(key);
    // Calls that start together with a new token share one validation.
    const inFlight = this.#validating.get(key);
    if (inFlight) return inFlight;
    const validation = this.#validate(token, key, now).finally(() => this.#validating.delete(key));
    this.#validating.set(key, validation);
    return validation;
  }

  async #validate(token: string, key: string, now: number): Promise<Session> {
    const backend = this.#o.backend;
    const res = await validateToken(this.#o.send, this.#o.authUrl, token);
    // Keystone answers 404 for an unknown or expired subject token, 401 for a bad auth token.
    if (res.status === 401 || res.status === 404) {
      throw new UnauthenticatedError(`the Keystone token sent for backend "${backend}" is invalid or expired`, {
        backend,
        httpStatus: res.status,
      });
    }
    if (res.status !== 200)
      throw errorFromResponse(res.status, res.text, {
        backend,
        service: 'identity',
        action: 'validating the caller token',
      });
    const session = toSession(token, res.text, this.#o);
    if (this.#callers.size >= MAX_CACHED_CALLERS) this.#callers.delete(this.#callers.keys().next().value as string);
    this.#callers.set(key, { session, until: Math.min(session.expiresAt, now + (this.#o.callerCacheMs ?? 60_000)) });
    return session;
  }

  /**
   * Forgets a token after a 401 from Cinder or Nova (revoked before expiry): a caller's cached
   * validation, or the service session, which the next probe then re-authenticates.
   */
  forget(token: string): void {
    this.#callers.delete(hash(token));
    if (token === this.#serviceResolved?.token) {
      this.#service = null;
      this.#serviceResolved = null;
    }
  }

  /** The gateway's own session, for probes and watchers only. */
  async serviceSession(): Promise<Session> {
    const auth = this.#o.serviceAuth;
    if (!auth)
      throw new UnauthenticatedError(`backend "${this.#o.backend}" has no service credential configured`, {
        backend: this.#o.backend,
      });
    const current = this.#service;
    if (current) {
      const s = await current.catch(() => null);
      if (s && s.expiresAt - REFRESH_MARGIN_MS > Date.now()) return s;
      if (this.#service === current) this.#service = null;
    }
    this.#service ??= this.#authenticate(auth);
    const pending = this.#service;
    try {
      const session = await pending;
      if (this.#service === pending) this.#serviceResolved = session;
      return session;
    } catch (err) {
      if (this.#service === pending) this.#service = null;
      throw err;
    }
  }

  async #authenticate(auth: ServiceAuth): Promise<Session> {
    const backend = this.#o.backend;
    const res = await issueToken(this.#o.send, this.#o.authUrl, auth);
    if (res.status !== 201) {
      if (res.status === 401)
        throw new BackendError(`the gateway's own credential for backend "${backend}" was refused by Keystone`, {
          backend,
          httpStatus: 401,
        });
      throw errorFromResponse(res.status, res.text, {
        backend,
        service: 'identity',
        action: 'authenticating the gateway',
      });
    }
    const token = res.headers['x-subject-token'];
    if (typeof token !== 'string' || !token)
      throw new BackendError(`Keystone sent no X-Subject-Token for backend "${backend}"`, { backend });
    return toSession(token, res.text, this.#o);
  }
}
