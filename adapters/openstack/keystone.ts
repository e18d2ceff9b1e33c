/**
 * Keystone v3: who the caller is and where their services live.
 *
 * - Callers send their own token (`X-Auth-Token`); the gateway validates it against Keystone
 *   (`GET /v3/auth/tokens` with the token as both `X-Auth-Token` and `X-Subject-Token`, which
 *   Keystone allows for the token's own subject) to learn its project, expiry and catalog.
 *   The answer is cached under a hash of that token only, so no caller ever sees another's.
 * - The gateway's own credential (password or application credential), when configured, serves
 *   only its probes and watchers: `POST /v3/auth/tokens`, reused until shortly before expiry.
 */
import { createHash } from 'node:crypto';
import { BackendError, BackendUnavailableError, UnauthenticatedError } from '../errors';
import type { HttpResponse } from '../transport';
import { errorFromResponse } from './errors';
import { tokensURL } from './urls';

/** The gateway's own OpenStack credential. Never used for callers' requests. */
export type ServiceAuth =
  | {
      method: 'password';
      username: string;
      password: string;
      /** @default 'Default' */
      userDomainName?: string;
      projectName: string;
      /** @default 'Default' */
      projectDomainName?: string;
    }
  | { method: 'applicationCredential'; id: string; secret: string };

/** A validated token with what the gateway needs to use it. */
export interface Session {
  token: string;
  projectId: string;
  /** Epoch ms. */
  expiresAt: number;
  /** Cinder v3 endpoint for the project, e.g. `http://cinder:8776/v3/<project>`. */
  volumeUrl: string;
  /** Nova endpoint, e.g. `http://nova:8774/v2.1`. */
  computeUrl: string;
}

/** Sends one Keystone request (the client supplies transport, deadline and records). */
export type KeystoneSend = (req: { method: 'GET' | 'POST'; url: string; headers: Record<string, string>; body?: string; endpoint: string }) => Promise<HttpResponse>;

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

/** Catalog types searched for Cinder v3, best first (deployments register one or both). */
const VOLUME_TYPES = ['block-storage', 'volumev3', 'block-store', 'volume'];
const COMPUTE_TYPES = ['compute'];
/** Refresh the gateway's own token this long before it expires. */
const REFRESH_MARGIN_MS = 5 * 60_000;
const MAX_CACHED_CALLERS = 1000;

interface CatalogEntry {
  type: string;
  endpoints: Array<{ interface: string; region?: string; region_id?: string; url: string }>;
}
interface TokenBody {
  token?: { expires_at?: string; project?: { id?: string }; catalog?: CatalogEntry[] };
}

const hash = (token: string): string => createHash('sha256').update(token).digest('base64url');

export class Keystone {
  readonly #o: KeystoneOptions;
  readonly #callers = new Map<string, { session: Session; until: number }>();
  #service: Promise<Session> | null = null;
  /** The resolved service session's token, so {@link forget} can tell it apart without awaiting. */
  #serviceToken: string | null = null;

  constructor(o: KeystoneOptions) {
    this.#o = o;
  }

  get hasServiceAuth(): boolean {
    return this.#o.serviceAuth !== undefined;
  }

  /** The caller's session; throws UNAUTHENTICATED for a missing, invalid or expired token. */
  async callerSession(token: string | undefined): Promise<Session> {
    if (!token) {
      throw new UnauthenticatedError(`backend "${this.#o.backend}" (OpenStack) needs the caller's Keystone token: send X-Auth-Token`, { backend: this.#o.backend });
    }
    const key = hash(token);
    const now = Date.now();
    const hit = this.#callers.get(key);
    if (hit && hit.until > now) return hit.session;
    this.#callers.delete(key);
    const res = await this.#o.send({
      method: 'GET',
      url: this.#o.authUrl + tokensURL(),
      headers: { accept: 'application/json', 'x-auth-token': token, 'x-subject-token': token },
      endpoint: 'GET /v3/auth/tokens',
    });
    // Keystone answers 404 for an unknown or expired subject token, 401 for a bad auth token.
    if (res.status === 401 || res.status === 404) {
      throw new UnauthenticatedError(`the Keystone token sent for backend "${this.#o.backend}" is invalid or expired`, { backend: this.#o.backend, httpStatus: res.status });
    }
    if (res.status !== 200) throw errorFromResponse(res.status, res.text, { backend: this.#o.backend, service: 'identity', action: 'validating the caller token' });
    const session = this.#session(token, res);
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
    if (token === this.#serviceToken) {
      this.#service = null;
      this.#serviceToken = null;
    }
  }

  /** The gateway's own session, for probes and watchers only. */
  async serviceSession(): Promise<Session> {
    const auth = this.#o.serviceAuth;
    if (!auth) throw new UnauthenticatedError(`backend "${this.#o.backend}" has no service credential configured`, { backend: this.#o.backend });
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
      if (this.#service === pending) this.#serviceToken = session.token;
      return session;
    } catch (err) {
      if (this.#service === pending) this.#service = null;
      throw err;
    }
  }

  async #authenticate(auth: ServiceAuth): Promise<Session> {
    const identity =
      auth.method === 'password'
        ? {
            auth: {
              identity: { methods: ['password'], password: { user: { name: auth.username, domain: { name: auth.userDomainName ?? 'Default' }, password: auth.password } } },
              scope: { project: { name: auth.projectName, domain: { name: auth.projectDomainName ?? 'Default' } } },
            },
          }
        : { auth: { identity: { methods: ['application_credential'], application_credential: { id: auth.id, secret: auth.secret } } } };
    const res = await this.#o.send({
      method: 'POST',
      url: this.#o.authUrl + tokensURL(),
      headers: { accept: 'application/json', 'content-type': 'application/json' },
      body: JSON.stringify(identity),
      endpoint: 'POST /v3/auth/tokens',
    });
    if (res.status !== 201) {
      const e = errorFromResponse(res.status, res.text, { backend: this.#o.backend, service: 'identity', action: 'authenticating the gateway' });
      throw res.status === 401 ? new BackendError(`the gateway's own credential for backend "${this.#o.backend}" was refused by Keystone`, { backend: this.#o.backend, httpStatus: 401 }) : e;
    }
    const token = res.headers['x-subject-token'];
    if (typeof token !== 'string' || !token) throw new BackendError(`Keystone sent no X-Subject-Token for backend "${this.#o.backend}"`, { backend: this.#o.backend });
    return this.#session(token, res);
  }

  #session(token: string, res: HttpResponse): Session {
    let body: TokenBody;
    try {
      body = JSON.parse(res.text) as TokenBody;
    } catch (err) {
      throw new BackendError(`Keystone sent a token body that is not JSON (backend "${this.#o.backend}")`, { backend: this.#o.backend, cause: err });
    }
    const t = body.token;
    const projectId = t?.project?.id;
    if (!t || !projectId) {
      throw new UnauthenticatedError(`the Keystone token for backend "${this.#o.backend}" is not scoped to a project`, { backend: this.#o.backend });
    }
    const expiresAt = Date.parse(t.expires_at ?? '');
    return {
      token,
      projectId,
      expiresAt: Number.isFinite(expiresAt) ? expiresAt : Date.now() + 60_000,
      volumeUrl: this.#endpoint(t.catalog ?? [], VOLUME_TYPES, 'block-storage (Cinder v3)'),
      computeUrl: this.#endpoint(t.catalog ?? [], COMPUTE_TYPES, 'compute (Nova)'),
    };
  }

  #endpoint(catalog: CatalogEntry[], types: string[], what: string): string {
    for (const type of types) {
      for (const entry of catalog.filter((c) => c.type === type)) {
        const ep = entry.endpoints.find((e) => e.interface === this.#o.interface && (e.region_id ?? e.region) === this.#o.region);
        if (ep) return ep.url.replace(/\/+$/, '');
      }
    }
    throw new BackendUnavailableError(
      `the Keystone catalog of backend "${this.#o.backend}" has no ${what} endpoint for region "${this.#o.region}", interface "${this.#o.interface}"`,
      { backend: this.#o.backend, retryable: false },
    );
  }
}
