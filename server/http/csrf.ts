/**
 * CSRF prevention (docs/conformance.md): Apollo Server refuses a GET or a "simple" POST unless it
 * carries a header that browsers send cross-site only after a preflight. The credential headers
 * are such headers (custom, never safelisted), so a request carrying one counts as preflighted:
 * urql's default GET with a backend's credential header (`X-<Kind>-Token`) is served, a bare form or
 * link GET is still refused.
 */
import type { CSRFPreventionOptions } from '@apollo/server';

/** Apollo's own preflight-forcing headers (its default `csrfPrevention.requestHeaders`). */
export const APOLLO_PREFLIGHT_HEADERS: readonly string[] = ['x-apollo-operation-name', 'apollo-require-preflight'];

/**
 * Apollo's `csrfPrevention` option: its own headers plus the given credential header names
 * (`credentialHeaderNames`, server/credentials.ts).
 */
export function csrfPrevention(credentialHeaders: readonly string[]): CSRFPreventionOptions {
  return {
    requestHeaders: [...new Set([...APOLLO_PREFLIGHT_HEADERS, ...credentialHeaders.map((h) => h.toLowerCase())])],
  };
}
