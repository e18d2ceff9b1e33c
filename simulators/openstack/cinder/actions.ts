/**
 * POST /v3/{p}/volumes/{id}/action: the body must hold exactly one action (else `Malformed
 * request body`), unknown names are 400 `There is no such action`, version-gated actions are a
 * generic 404 below their microversion — all before the volume is looked up (cinder-21/08).
 */
import { ApiError, GENERIC_NOT_FOUND } from '../http/fault';
import { atLeast, cmp, parseVersion } from '../http/microversion';
import type { Volume } from '../model';
import { ATTACH_ACTIONS } from './actions-attach';
import { STATE_ACTIONS } from './actions-state';
import { singleAction, type CinderCtx, type CinderResult } from './context';
import { getVolume } from './lookup';

export type ActionHandler = (ctx: CinderCtx, v: Volume, arg: unknown) => CinderResult;

export interface ActionDef {
  handler: ActionHandler;
  /** Lowest microversion (404 below it). */
  minMv?: string;
  /** The action exists only on a Cinder whose maximum microversion is at least this. */
  serverMin?: string;
}

const ACTIONS: Record<string, ActionDef> = { ...ATTACH_ACTIONS, ...STATE_ACTIONS };

export function volumeAction(ctx: CinderCtx): CinderResult {
  const serverMax = parseVersion(ctx.state.opts.cinderMaxVersion)!;
  const exists = (n: string): boolean => {
    const d = ACTIONS[n];
    return d !== undefined && (d.serverMin === undefined || cmp(serverMax, parseVersion(d.serverMin)!) >= 0);
  };
  const { name, arg } = singleAction(ctx.body, exists);
  const def = ACTIONS[name]!;
  if (def.minMv !== undefined && !atLeast(ctx.mv, def.minMv)) throw new ApiError(404, GENERIC_NOT_FOUND);
  const v = getVolume(ctx, ctx.params.id!);
  return def.handler(ctx, v, arg);
}
