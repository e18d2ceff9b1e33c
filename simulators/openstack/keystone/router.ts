/**
 * Keystone v3 (keystone-22 recordings): the version documents, `POST /v3/auth/tokens` with
 * password or application_credential, token validation/revocation, `/v3/auth/catalog` and
 * `/v3/auth/projects`. Flask spellings: compact error JSON with a trailing newline, upper-case
 * reason phrases (`201 CREATED`), `Vary: X-Auth-Token`.
 */
import { keystoneTime } from '../clock';
import type { ApplicationCredential, Token, User } from '../model';
import { pyDumps } from '../pyjson';
import type { SimState } from '../state';
import { header, type SimRequest, type SimResponse } from '../http/types';
import { buildCatalog } from './catalog';
import { DEFAULT_DOMAIN, mintToken } from './identity';

const REASONS: Record<number, string> = {
  200: 'OK',
  201: 'CREATED',
  204: 'NO CONTENT',
  300: 'MULTIPLE CHOICES',
  400: 'BAD REQUEST',
  401: 'UNAUTHORIZED',
  404: 'NOT FOUND',
  405: 'METHOD NOT ALLOWED',
};
const TITLES: Record<number, string> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  404: 'Not Found',
  405: 'Method Not Allowed',
};
const UNAUTHENTICATED = 'The request you have made requires authentication.';
const MEDIA_TYPES = [{ base: 'application/json', type: 'application/vnd.openstack.identity-v3+json' }];

export class KeystoneService {
  constructor(private readonly state: SimState) {}

  handle(req: SimRequest): SimResponse {
    const p = req.path.replace(/\/+$/, '') || '/';
    const m = req.method;
    if (p === '/' && m === 'GET') return this.json(300, { versions: { values: [this.versionDoc(req)] } });
    if (p === '/v3' && (m === 'GET' || m === 'HEAD')) return this.json(200, { version: this.versionDoc(req) });
    if (p === '/v3/auth/tokens') {
      if (m === 'POST') return this.createToken(req);
      if (m === 'GET' || m === 'HEAD' || m === 'DELETE') return this.subjectToken(req);
      return this.error(405, 'The method is not allowed for the requested URL.');
    }
    if (p === '/v3/auth/catalog' && m === 'GET')
      return this.withCaller(req, (t) =>
        this.json(
          200,
          {
            catalog: t.projectId ? buildCatalog(this.state, t.projectId) : [],
            links: { self: `${req.base}/v3/auth/catalog` },
          },
          true,
        ),
      );
    if (p === '/v3/auth/projects' && m === 'GET')
      return this.withCaller(req, (t) =>
        this.json(
          200,
          {
            projects: this.projectsOf(req, t.userId),
            links: { self: `${req.base}/v3/auth/projects`, previous: null, next: null },
          },
          true,
        ),
      );
    return this.error(404, 'The resource could not be found.');
  }

  private versionDoc(req: SimRequest): unknown {
    return {
      id: 'v3.14',
      status: 'stable',
      updated: '2020-04-07T00:00:00Z',
      links: [{ rel: 'self', href: `${req.base}/v3/` }],
      'media-types': MEDIA_TYPES,
    };
  }

  private createToken(req: SimRequest): SimResponse {
    let body: unknown;
    try {
      body = JSON.parse(req.body.toString('utf8'));
    } catch {
      return this.error(400, 'The browser (or proxy) sent a request that this server could not understand.');
    }
    const auth = obj(obj(body)?.auth);
    const identity = obj(auth?.identity);
    if (!auth || !identity)
      return this.error(400, expecting(auth ? 'identity' : 'auth', auth ? 'auth' : 'request body'));
    const methods = identity.methods;
    if (!Array.isArray(methods) || methods.length === 0) return this.error(400, expecting('methods', 'identity'));
    const scope = obj(auth.scope);
    let token: Token | null;
    if (methods.includes('application_credential')) {
      if (scope) return this.error(401, UNAUTHENTICATED);
      token = this.appCredAuth(obj(identity.application_credential));
    } else if (methods.includes('password')) {
      token = this.passwordAuth(obj(obj(identity.password)?.user), scope);
    } else if (methods.includes('token')) {
      token = this.tokenAuth(obj(identity.token), scope);
    } else {
      return this.error(401, UNAUTHENTICATED);
    }
    if (!token) return this.error(401, UNAUTHENTICATED);
    return this.json(201, this.tokenBody(token, !req.query.some(([k]) => k === 'nocatalog')), false, {
      'X-Subject-Token': token.id,
    });
  }

  private passwordAuth(
    u: Record<string, unknown> | undefined,
    scope: Record<string, unknown> | undefined,
  ): Token | null {
    if (!u || typeof u.password !== 'string') return null;
    const user = this.lookupUser(u);
    if (!user || user.password !== u.password) return null;
    return this.scoped(user, scope, ['password']);
  }

  private tokenAuth(t: Record<string, unknown> | undefined, scope: Record<string, unknown> | undefined): Token | null {
    const old = typeof t?.id === 'string' ? this.state.tokens.get(t.id) : undefined;
    if (!old || old.revoked || Date.now() * 1000 >= old.expiresAt || old.appCred) return null;
    const user = this.state.users.get(old.userId);
    return user ? this.scoped(user, scope, ['token', ...old.methods.filter((x) => x !== 'token')]) : null;
  }

  /** Scope by project (id, or name + domain); none: the user's default project, else unscoped. */
  private scoped(user: User, scope: Record<string, unknown> | undefined, methods: string[]): Token | null {
    let projectId: string | null = null;
    if (scope) {
      const p = obj(scope.project);
      if (!p) return null; // domain and system scopes are not simulated
      const project =
        typeof p.id === 'string'
          ? this.state.projects.get(p.id)
          : typeof p.name === 'string' && domainOk(p.domain)
            ? [...this.state.projects.values()].find((x) => x.name === p.name)
            : undefined;
      if (!project) return null;
      projectId = project.id;
    } else if (user.defaultProjectId && (user.roles.get(user.defaultProjectId)?.length ?? 0) > 0) {
      projectId = user.defaultProjectId;
    }
    if (projectId !== null && !(user.roles.get(projectId)?.length ?? 0)) return null;
    return mintToken(this.state, user, projectId, { methods });
  }

  private appCredAuth(a: Record<string, unknown> | undefined): Token | null {
    if (!a || typeof a.secret !== 'string') return null;
    let cred: ApplicationCredential | undefined;
    if (typeof a.id === 'string') cred = this.state.appCreds.get(a.id);
    else if (typeof a.name === 'string') {
      const owner = this.lookupUser(obj(a.user) ?? {});
      cred = owner
        ? [...this.state.appCreds.values()].find((c) => c.name === a.name && c.userId === owner.id)
        : undefined;
    }
    if (!cred || cred.secret !== a.secret) return null;
    const user = this.state.users.get(cred.userId);
    if (!user) return null;
    return mintToken(this.state, user, cred.projectId, {
      methods: ['application_credential'],
      roles: cred.roles,
      appCred: cred,
    });
  }

  private lookupUser(u: Record<string, unknown>): User | undefined {
    if (typeof u.id === 'string') return this.state.users.get(u.id);
    if (typeof u.name === 'string' && domainOk(u.domain)) return this.state.findUser(u.name, DEFAULT_DOMAIN.id);
    return undefined;
  }

  /** GET (validate) / HEAD (check) / DELETE (revoke) of X-Subject-Token, authorised by X-Auth-Token. */
  private subjectToken(req: SimRequest): SimResponse {
    return this.withCaller(req, () => {
      const subject = this.state.tokens.get(header(req, 'x-subject-token') ?? '');
      if (!subject || subject.revoked || Date.now() * 1000 >= subject.expiresAt)
        return this.error(404, 'Failed to validate token');
      if (req.method === 'DELETE') {
        subject.revoked = true;
        return {
          status: 204,
          statusText: REASONS[204],
          headers: { Vary: 'X-Auth-Token', 'x-openstack-request-id': req.requestId },
          body: null,
        };
      }
      const r = this.json(200, this.tokenBody(subject, !req.query.some(([k]) => k === 'nocatalog')), false, {
        'X-Subject-Token': subject.id,
      });
      return req.method === 'HEAD' ? { ...r, body: null } : r;
    });
  }

  private withCaller(req: SimRequest, fn: (t: Token) => SimResponse): SimResponse {
    const t = this.state.tokens.get(header(req, 'x-auth-token') ?? '');
    if (!t || t.revoked || Date.now() * 1000 >= t.expiresAt) {
      const r = this.error(401, UNAUTHENTICATED);
      r.headers['WWW-Authenticate'] = `Keystone uri="${req.base}/v3"`;
      return r;
    }
    return fn(t);
  }

  private projectsOf(req: SimRequest, userId: string): unknown[] {
    const user = this.state.users.get(userId);
    if (!user) return [];
    return [...user.roles.entries()]
      .filter(([, roles]) => roles.length > 0)
      .flatMap(([pid]) => {
        const p = this.state.projects.get(pid);
        return p
          ? [
              {
                id: p.id,
                name: p.name,
                domain_id: p.domainId,
                description: '',
                enabled: true,
                parent_id: p.domainId,
                is_domain: false,
                tags: [],
                options: {},
                links: { self: `${req.base}/v3/projects/${p.id}` },
              },
            ]
          : [];
      });
  }

  /** The token document, key order as recorded; `?nocatalog` leaves the catalog out. */
  tokenBody(t: Token, withCatalog = true): unknown {
    const user = this.state.users.get(t.userId);
    const token: Record<string, unknown> = {
      methods: t.methods,
      user: { domain: { ...DEFAULT_DOMAIN }, id: t.userId, name: user?.name ?? '', password_expires_at: null },
      audit_ids: [t.auditId],
      expires_at: keystoneTime(t.expiresAt),
      issued_at: keystoneTime(t.issuedAt),
    };
    const project = t.projectId === null ? undefined : this.state.projects.get(t.projectId);
    if (project) {
      token.project = { domain: { ...DEFAULT_DOMAIN }, id: project.id, name: project.name };
      token.is_domain = false;
      token.roles = t.roles.map((r) => ({ id: this.state.roleIds[r], name: r }));
      if (withCatalog) token.catalog = buildCatalog(this.state, project.id);
    }
    if (t.appCred) token.application_credential = { id: t.appCred.id, name: t.appCred.name, restricted: true };
    return { token };
  }

  private json(
    status: number,
    body: unknown,
    trailingNewline = false,
    extra: Record<string, string> = {},
  ): SimResponse {
    return {
      status,
      statusText: REASONS[status] ?? String(status),
      headers: { 'Content-Type': 'application/json', ...extra, Vary: 'X-Auth-Token' },
      body: pyDumps(body) + (trailingNewline ? '\n' : ''),
    };
  }

  private error(status: number, message: string): SimResponse {
    const headers: Record<string, string> = { 'Content-Type': 'application/json' };
    if (status === 401) headers['WWW-Authenticate'] = `Keystone uri="${this.state.urls.keystone}/v3"`;
    headers.Vary = 'X-Auth-Token';
    return {
      status,
      statusText: REASONS[status] ?? String(status),
      headers,
      body: `${JSON.stringify({ error: { code: status, message, title: TITLES[status] ?? 'Error' } })}\n`,
    };
  }
}

function obj(v: unknown): Record<string, unknown> | undefined {
  return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
}

/** Only the Default domain exists; a missing domain means the default one. */
function domainOk(d: unknown): boolean {
  const o = obj(d);
  if (!o) return d === undefined;
  return o.id === DEFAULT_DOMAIN.id || o.name === DEFAULT_DOMAIN.name;
}

function expecting(attr: string, target: string): string {
  return `Expecting to find ${attr} in ${target}. The server could not comply with the request since it is either malformed or otherwise incorrect. The client is assumed to be in error.`;
}
