/**
 * `GET /v1/acl/token/self` (command/agent/acl_endpoint.go `aclTokenSelf`, nomad/acl_endpoint.go
 * `ResolveToken`): the token the request carries. `ResolveToken` looks the secret up without
 * authenticating first, so an unknown (or empty) secret is `404 ACL token not found` rather than
 * the `403 Permission denied` the CSI endpoints answer. ACLs off: `400 ACL support disabled`.
 */
import { createHash } from 'node:crypto';
import { isResult, leaderMeta, parseQueryOptions, type HandlerResult, type SimContext, type SimRequest } from '../http';

/** A stable UUID-shaped accessor id for a simulated secret. */
function accessorId(secret: string): string {
  const h = createHash('sha256').update(`accessor/${secret}`).digest('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20, 32)}`;
}

export function aclTokenSelf(ctx: SimContext, req: SimRequest): HandlerResult {
  if (req.method !== 'GET') return { kind: 'error', status: 405, text: 'Invalid method' };
  const q = parseQueryOptions(ctx, req);
  if (isResult(q)) return q;
  if (q.region !== ctx.region) return { kind: 'error', status: 500, text: 'No path to region' };
  if (!ctx.acl.enabled) return { kind: 'error', status: 400, text: 'ACL support disabled' };
  const meta = leaderMeta(ctx.state.index);
  const t = req.token === '' ? undefined : ctx.acl.lookup(req.token);
  if (!t) return { kind: 'error', status: 404, text: 'ACL token not found', meta };
  const policies = Object.entries(t.namespaces ?? {}).map(([ns, p]) => `${ns}-${Array.isArray(p) ? p.join(',') : p}`);
  return {
    kind: 'json',
    meta,
    value: {
      AccessorID: accessorId(t.secret),
      SecretID: t.secret,
      Name: t.name ?? '',
      Type: t.management ? 'management' : 'client',
      Policies: t.management ? null : policies,
      Roles: null,
      Global: false,
      CreateTime: '2025-01-01T00:00:00Z',
      ExpirationTime: null,
      CreateIndex: 1,
      ModifyIndex: 1,
    },
  };
}
