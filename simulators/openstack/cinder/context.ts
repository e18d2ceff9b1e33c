/** What a Cinder handler receives, and what it returns. */
import { ApiError } from '../http/fault';
import type { AuthContext } from '../http/token-auth';
import type { SimRequest } from '../http/types';
import type { SimState } from '../state';
import type { ViewContext } from './views';

export interface CinderCtx extends ViewContext {
  req: SimRequest;
  auth: AuthContext;
  state: SimState;
  /** Path parameters of the matched route. */
  params: Record<string, string>;
  /** The parsed JSON body (undefined when none). */
  body: unknown;
}

export interface CinderResult {
  status: number;
  /** JSON body; omitted = empty body. */
  body?: unknown;
  /** Content-Type of an empty body: Cinder's DELETE and unset_image_metadata send text/html. @default 'json' */
  emptyAs?: 'json' | 'html';
}

export function ok(status: number, body?: unknown): CinderResult {
  return body === undefined ? { status } : { status, body };
}

/**
 * The one action of an `…/action` body: more or fewer keys are 400 `Malformed request body`,
 * names not in `known` are 400 `There is no such action` (cinder-21/08).
 */
export function singleAction(body: unknown, known: (name: string) => boolean): { name: string; arg: unknown } {
  const o = asObject(body);
  const names = o ? Object.keys(o) : [];
  if (!o || names.length !== 1) throw new ApiError(400, 'Malformed request body');
  const name = names[0]!;
  if (!known(name))
    throw new ApiError(
      400,
      `There is no such action: ${name}. Verify the request body and Content-Type header and try again.`,
    );
  return { name, arg: o[name] };
}

/** A plain JSON object from a body member, or undefined. */
export function asObject(v: unknown): Record<string, unknown> | undefined {
  return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
}
