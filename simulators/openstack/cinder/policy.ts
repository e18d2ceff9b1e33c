/**
 * Cinder policy checks, with the rule names and the 403 text keystone-22/01 recorded
 * (`Policy doesn't allow <rule> to be performed.`). Zed defaults: admin-only rules need the
 * admin role; project rules accept any role on the project unless `enforceNewDefaults`, where
 * writes need member.
 */
import { ApiError } from '../http/fault';
import type { AuthContext } from '../http/token-auth';
import type { SimState } from '../state';

export type Rule = 'admin' | 'admin_or_service' | 'member' | 'reader';

export function policyError(name: string): ApiError {
  return new ApiError(403, `Policy doesn't allow ${name} to be performed.`);
}

export function authorize(state: SimState, auth: AuthContext, name: string, rule: Rule): void {
  if (auth.isAdmin) return;
  if (rule === 'admin') throw policyError(name);
  if (rule === 'admin_or_service') {
    if (!auth.isService) throw policyError(name);
    return;
  }
  if (rule === 'member' && state.opts.enforceNewDefaults && !auth.roles.includes('member')) throw policyError(name);
}
