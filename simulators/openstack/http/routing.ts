/**
 * Route tables for the Routes-mapper style APIs (Cinder, Nova): `method` + `a/:id/b` patterns,
 * matched segment by segment, first match wins (literal routes go first), and the JSON body
 * parsing their WSGI layers share (415 for other content types, 400 `Malformed request body`).
 */
import { ApiError } from './fault';
import { header, type SimRequest } from './types';

export interface Route<H> {
  method: string;
  path: string[];
  handler: H;
  /** Lowest microversion (Cinder answers a generic 404 below it). */
  minMv?: string;
}

export function route<H>(method: string, path: string, handler: H, minMv?: string): Route<H> {
  return { method, path: path.split('/'), handler, ...(minMv ? { minMv } : {}) };
}

export function matchRoute<H>(
  routes: Array<Route<H>>,
  method: string,
  segs: string[],
): { route: Route<H>; params: Record<string, string> } | null {
  for (const r of routes) {
    if (r.method !== method || r.path.length !== segs.length) continue;
    const params: Record<string, string> = {};
    const ok = r.path.every((p, i) => {
      if (!p.startsWith(':')) return p === segs[i];
      params[p.slice(1)] = segs[i]!;
      return true;
    });
    if (ok) return { route: r, params };
  }
  return null;
}

/** The JSON body of a POST/PUT (undefined when empty or another method). */
export function parseJsonBody(req: SimRequest, contentTypes: readonly string[]): unknown {
  if (req.method !== 'POST' && req.method !== 'PUT') return undefined;
  const ct = header(req, 'content-type');
  if (ct !== undefined && !contentTypes.includes(ct.split(';')[0]!.trim().toLowerCase()))
    throw new ApiError(415, 'Unsupported Content-Type');
  const text = req.body.toString('utf8');
  if (text.trim() === '') return undefined;
  try {
    return JSON.parse(text);
  } catch {
    throw new ApiError(400, 'Malformed request body');
  }
}
