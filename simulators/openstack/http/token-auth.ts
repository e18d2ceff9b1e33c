/**
 * keystonemiddleware's auth_token as it sits in front of Cinder and Nova: it validates the
 * X-Auth-Token against Keystone (here: the shared token table), caches a validation for
 * `token_cache_time` (so a token revoked after first use keeps working until the cache expires,
 * as recorded in keystone-22/03), always honours expiry, and answers 401 with its own JSON body
 * and `WWW-Authenticate: Keystone uri="<keystone>"`.
 */
import type { Role, Token } from '../model';
import { pyDumps } from '../pyjson';
import type { SimState } from '../state';
import { header, type Service, type SimRequest, type SimResponse } from './types';

/** Who is calling, as the service's request context sees it. */
export interface AuthContext {
  token: Token;
  userId: string;
  /** null for an unscoped token. */
  projectId: string | null;
  roles: Role[];
  /** `context_is_admin` (role:admin). */
  isAdmin: boolean;
  /** A service request (a valid X-Service-Token with the `service` role, or a service-role token). */
  isService: boolean;
}

export class TokenValidator {
  private readonly cache = new Map<Service, Map<string, number>>();

  constructor(private readonly state: SimState) {}

  /** The caller's context, or null when keystonemiddleware would answer 401. */
  authenticate(service: Service, req: SimRequest): AuthContext | null {
    const token = this.validate(service, header(req, 'x-auth-token'));
    if (!token) return null;
    const serviceToken = this.validate(service, header(req, 'x-service-token'));
    return {
      token,
      userId: token.userId,
      projectId: token.projectId,
      roles: token.roles,
      isAdmin: token.roles.includes('admin'),
      isService: token.roles.includes('service') || (serviceToken?.roles.includes('service') ?? false),
    };
  }

  private validate(service: Service, id: string | undefined): Token | null {
    if (id === undefined || id === '') return null;
    const token = this.state.tokens.get(id);
    if (!token) return null;
    const now = Date.now();
    if (now * 1000 >= token.expiresAt) return null;
    let perService = this.cache.get(service);
    if (!perService) this.cache.set(service, (perService = new Map<string, number>()));
    if (token.revoked) {
      const until = perService.get(id);
      return until !== undefined && until > now ? token : null;
    }
    if (!perService.has(id) || perService.get(id)! <= now) perService.set(id, now + this.state.opts.tokenCacheMs);
    return token;
  }

  /** keystonemiddleware's 401. */
  unauthorized(): SimResponse {
    return {
      status: 401,
      headers: { 'Content-Type': 'application/json', 'WWW-Authenticate': `Keystone uri="${this.state.urls.keystone}"` },
      body: pyDumps({
        error: { code: 401, title: 'Unauthorized', message: 'The request you have made requires authentication.' },
      }),
    };
  }
}
