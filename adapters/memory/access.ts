/**
 * Who may do what: the tokens and grants declared in the data. Every call passes here first, so a
 * denial is real — an unknown or expired token is UNAUTHENTICATED, a known one outside its grants
 * FORBIDDEN — and `onAnswer` hears the status an HTTP backend would have answered.
 */
import { createHash } from 'node:crypto';
import type { CallOptions, CallerCredential } from '../contract/call-options';
import type { Volume } from '../contract/model';
import type { AccessGrant } from '../contract/watch';
import type { GrantData, MemoryData, TokenData } from './data/shape';
import { forbidden, unauthenticated } from './errors';

/** What a call may do. */
export interface Principal {
  /** For messages; never the token. */
  name: string;
  admin: boolean;
  grants: readonly GrantData[];
  /** Ms since epoch; undefined = never. */
  expiresAt?: number;
}

/** Everything (no tokens declared: the backend is open). */
const OPEN: Principal = { name: 'anyone', admin: true, grants: [{ namespace: '*', write: true }] };

/** What a credential is called in messages (the module's header). */
export const CREDENTIAL_WORDS = 'a memory token (X-Memory-Token)';

const digest = (token: string): string => createHash('sha256').update(token).digest('hex');

export class MemoryAccess {
  /** Tokens by the hash of their secret (a lookup by hash does not time the secret), per data set. */
  #byHash = new WeakMap<readonly TokenData[], Map<string, TokenData>>();

  constructor(
    readonly backend: string,
    /** Where the tokens and grants are read on every check (the store: a reset or reload replaces them). */
    readonly held: { readonly access: Pick<MemoryData, 'tokens' | 'anonymous'> },
  ) {}

  /** True when no call can succeed without a token: tokens declared, no anonymous grants. */
  get requiresCredential(): boolean {
    const d = this.held.access;
    return (d.tokens?.length ?? 0) > 0 && (d.anonymous?.length ?? 0) === 0;
  }

  /**
   * The principal of a credential.
   * @throws UnauthenticatedError for an unknown or expired token, or none where one is needed
   */
  principal(credential: CallerCredential, o?: Pick<CallOptions, 'onAnswer'>): Principal {
    const d = this.held.access;
    if (!d.tokens || d.tokens.length === 0) return OPEN;
    const deny = (why: string): never => {
      o?.onAnswer?.(401);
      throw unauthenticated(this.backend, `backend "${this.backend}" ${why}`);
    };
    if (!credential.token) {
      if ((d.anonymous?.length ?? 0) === 0) deny(`needs ${CREDENTIAL_WORDS}; the request carried none`);
      return { name: 'anonymous', admin: false, grants: d.anonymous! };
    }
    let index = this.#byHash.get(d.tokens);
    if (!index) this.#byHash.set(d.tokens, (index = new Map(d.tokens.map((x) => [digest(x.token), x]))));
    const t = index.get(digest(credential.token));
    if (!t) return deny('does not know this token');
    const expiresAt = t.expiresAt ? Date.parse(t.expiresAt) : undefined;
    if (expiresAt !== undefined && expiresAt <= Date.now()) deny('refuses this token: it has expired');
    return { name: t.name ?? 'token', admin: t.admin ?? false, grants: t.grants, expiresAt };
  }

  /** True when `p` may read (or, with `write`, change) `namespace`. */
  allows(p: Principal, namespace: string, write: boolean): boolean {
    return (
      p.admin ||
      p.grants.some((g) => (g.namespace === '*' || g.namespace === namespace) && (!write || g.write === true))
    );
  }

  /**
   * The principal, checked for `namespace`; tells `onAnswer` the outcome.
   * @throws UnauthenticatedError (see {@link principal}); ForbiddenError outside the grants
   */
  authorize(namespace: string, write: boolean, o: CallOptions): Principal {
    const p = this.principal(o.credential, o);
    if (!this.allows(p, namespace, write)) {
      o.onAnswer?.(403);
      throw forbidden(
        this.backend,
        `backend "${this.backend}": the caller's token may not ${write ? 'change' : 'read'} namespace "${namespace}"`,
      );
    }
    if (o.credential.token) o.onAnswer?.(200);
    return p;
  }

  /** The subscriber's grant for `scope`; valid until the token expires. */
  checkAccess(scope: string, o: CallOptions): AccessGrant {
    const p = this.principal(o.credential, o);
    return { allowed: this.allows(p, scope, false), admin: p.admin, validUntil: p.expiresAt };
  }

  /** Resolves for no token; a token must be one the data declare and unexpired. */
  checkCredential(o: CallOptions): void {
    if (o.credential.token) this.principal(o.credential, o);
  }

  /** Memory volumes have no admin-only fields: every grant sees them whole. */
  redact(volume: Volume, _grant: AccessGrant): Volume {
    return volume;
  }
}
