/** What a Nova handler receives and returns, plus Nova's instance lookup and policy texts. */
import { ApiError } from '../http/fault';
import type { Version } from '../http/microversion';
import type { AuthContext } from '../http/token-auth';
import type { SimRequest } from '../http/types';
import type { Server } from '../model';
import type { SimState } from '../state';
import type { ActionCaller } from './instance-actions';

export interface NovaCtx {
  req: SimRequest;
  auth: AuthContext;
  state: SimState;
  mv: Version;
  params: Record<string, string>;
  body: unknown;
}

export interface NovaResult {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
}

/** `common.get_instance`: another project's server is simply not found. */
export function getInstance(ctx: NovaCtx, id: string): Server {
  const s = ctx.state.servers.get(id);
  if (!s || (!ctx.auth.isAdmin && s.projectId !== ctx.auth.projectId))
    throw new ApiError(404, `Instance ${id} could not be found.`);
  return s;
}

/** The request context as instance actions record it (`context.request_id`, user, project). */
export function actionCaller(ctx: NovaCtx, s: Server): ActionCaller {
  return { requestId: ctx.req.requestId, userId: ctx.auth.userId, projectId: ctx.auth.projectId ?? s.projectId };
}

/** Nova policy: `admin_api` rules need admin; project rules need member when new defaults are enforced. */
export function can(ctx: NovaCtx, rule: string, kind: 'admin' | 'member' | 'reader'): void {
  if (ctx.auth.isAdmin) return;
  const denied =
    kind === 'admin' || (kind === 'member' && ctx.state.opts.enforceNewDefaults && !ctx.auth.roles.includes('member'));
  if (denied) throw new ApiError(403, `Policy doesn't allow ${rule} to be performed.`);
}

/** `raise_http_conflict_for_instance_invalid_state`. */
export function invalidState(action: string, s: Server): ApiError {
  return new ApiError(409, `Cannot '${action}' instance ${s.id} while it is in vm_state ${s.vmState}`);
}
