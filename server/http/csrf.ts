/**
 * CSRF prevention for queries and mutations over HTTP (`CSRF_PREVENTION`; docs/conformance.md,
 * "CSRF prevention"). A page on another site can make a browser send a "simple" request (no
 * preflight): a GET, or a POST whose `content-type` is a form's or `text/plain`. Browsers attach
 * ambient credentials to it (cookies, HTTP auth) and reach what the browser reaches; the page
 * cannot read the answer, but the request's effects happen.
 *
 * The gateway reads no cookies and no HTTP auth: a caller's credentials are custom headers
 * (`X-<Kind>-Token`), which a browser sends cross-site only after a preflight that CORS grants to
 * listed origins only. Hence the modes:
 * - `standard` (default): a GET is served. It cannot run a mutation (405); without a credential
 *   header it runs as an anonymous caller, which reveals nothing a direct request would not, and
 *   with one the header itself needed a preflight. A POST with a simple or no `content-type` is
 *   served only with a sign of a preflight: a non-empty `apollo-require-preflight` or
 *   `x-apollo-operation-name`, or a non-empty credential header.
 * - `strict`, for a deployment where something in front of the gateway adds credential headers
 *   from what browsers send by themselves (a proxy that turns a session cookie into
 *   `X-<Kind>-Token`): a credential header proves nothing there, so a request that carries one, and
 *   every POST, must carry a non-simple `content-type` (`application/json`) or Apollo's
 *   `apollo-require-preflight` or `x-apollo-operation-name`. A GET without credentials is served.
 * - `off`: nothing is checked.
 *
 * Subscription streams are not checked here: the origin rule (server/http/origin.ts) refuses a
 * foreign page's stream outright.
 */
import type { IncomingHttpHeaders } from 'node:http';
import { pickCredentialHeaders } from '../credentials';
import { EdgeError, EdgeErrorCode } from './errors';

export const CSRF_MODES = ['standard', 'strict', 'off'] as const;
/** How CSRF prevention decides (see the module comment). */
export type CsrfMode = (typeof CSRF_MODES)[number];

/** Apollo's own preflight-forcing headers: custom, so a browser sends them cross-site only after a preflight. */
export const APOLLO_PREFLIGHT_HEADERS: readonly string[] = ['apollo-require-preflight', 'x-apollo-operation-name'];

/** The `content-type`s a browser sends cross-site without a preflight (compared without parameters). */
const SIMPLE_TYPES = new Set(['application/x-www-form-urlencoded', 'multipart/form-data', 'text/plain']);

const first = (v: string | string[] | undefined): string => (Array.isArray(v) ? (v[0] ?? '') : (v ?? '')).trim();

/** Whether a browser would have preflighted the request: a non-simple `content-type`, or Apollo's headers non-empty. */
function preflighted(h: IncomingHttpHeaders): boolean {
  const type = first(h['content-type']).split(';')[0]!.trim().toLowerCase();
  if (type !== '' && !SIMPLE_TYPES.has(type)) return true;
  return APOLLO_PREFLIGHT_HEADERS.some((name) => first(h[name]) !== '');
}

/** 400 CSRF_PREFLIGHT_REQUIRED: a request a cross-site page could have sent without a preflight. */
export class CsrfRefusedError extends EdgeError {
  constructor(mode: Exclude<CsrfMode, 'off'>) {
    const needs =
      mode === 'strict'
        ? 'with CSRF_PREVENTION=strict a request carrying a credential header, and every POST, needs `content-type: application/json` or a non-empty `apollo-require-preflight` (or `x-apollo-operation-name`) header'
        : 'a POST needs `content-type: application/json`, a non-empty `apollo-require-preflight` (or `x-apollo-operation-name`) header, or a credential header';
    super(
      EdgeErrorCode.CsrfPreflightRequired,
      400,
      `this request has been blocked as a potential Cross-Site Request Forgery (CSRF): ${needs}`,
      { csrfPrevention: mode },
    );
  }
}

/**
 * Refuses a request that `mode` does not serve (see the module comment).
 * @throws CsrfRefusedError
 */
export function checkCsrf(mode: CsrfMode, method: string, headers: IncomingHttpHeaders): void {
  if (mode === 'off' || (method !== 'GET' && method !== 'POST')) return;
  const credentialed = Object.keys(pickCredentialHeaders(headers)).length > 0;
  const needsProof = mode === 'strict' ? method === 'POST' || credentialed : method === 'POST' && !credentialed;
  if (needsProof && !preflighted(headers)) throw new CsrfRefusedError(mode);
}
