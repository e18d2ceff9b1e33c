/**
 * ACL tokens and capability checks (hashicorp/nomad command/agent/http.go for the token headers;
 * acl/, nomad/auth/auth.go, and each CSI RPC's checks in nomad/csi_endpoint.go).
 *
 * Simulated policies map onto Nomad's namespace policy shorthands: `read` grants what Nomad's
 * `policy = "read"` grants (list-jobs, read-job, csi-list-volume, csi-read-volume, …) and `write`
 * adds csi-write-volume and csi-mount-volume (Nomad's `policy = "write"`). `pluginRead` is the
 * `plugin { policy = "read" }` block (list + read). Namespace rule keys may be globs (`*`).
 *
 * Token resolution follows Nomad 1.5+ `Authenticate`: an unknown secret is not an
 * "ACL token not found" reply on these RPCs; the handlers turn any authentication failure into
 * `ErrPermissionDenied`, so the HTTP answer is `403 Permission denied`.
 */

/** Capabilities the CSI endpoints check. */
export type NsCapability =
  | 'list-jobs'
  | 'read-job'
  | 'csi-list-volume'
  | 'csi-read-volume'
  | 'csi-write-volume'
  | 'csi-mount-volume'
  | 'host-volume-read';

const READ_CAPS: NsCapability[] = ['list-jobs', 'read-job', 'csi-list-volume', 'csi-read-volume', 'host-volume-read'];
const WRITE_CAPS: NsCapability[] = [...READ_CAPS, 'csi-write-volume', 'csi-mount-volume'];

/**
 * A namespace rule: a policy shorthand, or an explicit capability list (Nomad's
 * `namespace "x" { capabilities = ["csi-list-volume"] }`).
 */
export type NamespaceRule = 'read' | 'write' | NsCapability[];

const capsOf = (r: NamespaceRule): readonly NsCapability[] =>
  r === 'write' ? WRITE_CAPS : r === 'read' ? READ_CAPS : r;

/** A simulated ACL token. */
export interface TokenSpec {
  secret: string;
  name?: string;
  management?: boolean;
  namespaces?: Record<string, NamespaceRule>;
  /** @default true */
  pluginRead?: boolean;
}

function globMatch(pattern: string, name: string): boolean {
  const re = new RegExp(
    '^' +
      pattern
        .split('*')
        .map((p) => p.replace(/[.+?^${}()|[\]\\]/g, '\\$&'))
        .join('.*') +
      '$',
  );
  return re.test(name);
}

/** A compiled ACL object, like `acl.ACL`. */
export class Acl {
  constructor(
    readonly management: boolean,
    private readonly rules: Map<string, NamespaceRule>,
    readonly pluginRead: boolean,
  ) {}

  /** Full access: ACLs disabled or a management token. */
  static readonly all = new Acl(true, new Map(), true);

  private policyFor(ns: string): NamespaceRule | undefined {
    const exact = this.rules.get(ns);
    if (exact) return exact;
    // Nomad picks the closest glob; the longest literal part is a good stand-in.
    let best: { len: number; p: NamespaceRule } | undefined;
    for (const [pattern, p] of this.rules) {
      if (!pattern.includes('*') || !globMatch(pattern, ns)) continue;
      const len = pattern.replace(/\*/g, '').length;
      if (!best || len > best.len) best = { len, p };
    }
    return best?.p;
  }

  /** `AllowNsOp(ns, op)`; `ns === "*"` asks whether any namespace rule allows it. */
  allowNsOp(ns: string, op: NsCapability): boolean {
    if (this.management) return true;
    if (ns === '*') {
      for (const p of this.rules.values()) if (capsOf(p).includes(op)) return true;
      return false;
    }
    const p = this.policyFor(ns);
    if (!p) return false;
    return capsOf(p).includes(op);
  }

  /** `acl.NamespaceValidator(ops...)`: any of the capabilities suffices. */
  allowAny(ns: string, ops: NsCapability[]): boolean {
    return ops.some((op) => this.allowNsOp(ns, op));
  }

  allowPluginRead(): boolean {
    return this.management || this.pluginRead;
  }

  allowPluginList(): boolean {
    return this.management || this.pluginRead;
  }
}

/** Token store plus the anonymous policy. */
export class AclStore {
  private readonly tokens = new Map<string, TokenSpec>();

  constructor(
    readonly enabled: boolean,
    private readonly anonymousRead: string[] | '*',
  ) {}

  add(t: TokenSpec): void {
    this.tokens.set(t.secret, t);
  }

  /** Deletes a token (Nomad's `acl token delete`): its secret is unknown from then on. */
  remove(secret: string): boolean {
    return this.tokens.delete(secret);
  }

  /** The token with this secret, if any. */
  lookup(secret: string): TokenSpec | undefined {
    return this.tokens.get(secret);
  }

  /**
   * Resolves the request's secret. Returns the ACL, or null when authentication fails (the
   * RPC then answers `Permission denied`).
   */
  resolve(secret: string): Acl | null {
    if (!this.enabled) return Acl.all;
    if (secret === '') {
      const rules = new Map<string, NamespaceRule>();
      if (this.anonymousRead === '*') rules.set('*', 'read');
      else for (const ns of this.anonymousRead) rules.set(ns, 'read');
      return new Acl(false, rules, rules.size > 0);
    }
    const t = this.tokens.get(secret);
    if (!t) return null;
    if (t.management) return Acl.all;
    return new Acl(false, new Map(Object.entries(t.namespaces ?? {})), t.pluginRead ?? true);
  }
}

/**
 * Extracts the secret like Nomad's `parseToken`: `X-Nomad-Token` (trimmed) wins, else
 * `Authorization: Bearer <token>` (scheme case-insensitive, first word of the value).
 */
export function parseToken(headers: Record<string, string | string[] | undefined>): string {
  const first = (v: string | string[] | undefined): string => (Array.isArray(v) ? (v[0] ?? '') : (v ?? ''));
  const x = first(headers['x-nomad-token']);
  if (x !== '') return x.trim();
  const auth = first(headers['authorization']);
  if (auth !== '') {
    const parts = auth.split(' ');
    if (parts.length > 1 && parts[0]!.toLowerCase() === 'bearer') {
      const value = parts.slice(1).join(' ').trim();
      return (value.split(' ')[0] ?? '').trim();
    }
  }
  return '';
}

/** Any one of these lets a token list CSI volumes in a namespace (`csi-list-volume` or stronger). */
export const CSI_LIST_CAPS: NsCapability[] = ['csi-list-volume', 'csi-read-volume', 'csi-mount-volume', 'list-jobs'];
