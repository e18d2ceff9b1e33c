/**
 * CORS, off unless origins are configured (docs/conformance.md: CORS and CSRF). With it on, a
 * browser page from an allowed origin may call `/graphql` with the headers the gateway reads;
 * other origins get no CORS headers, so their browsers keep the answer from the page. CORS
 * governs what browsers let pages read; it is not access control, and Apollo's CSRF prevention
 * stays on either way.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { CREDENTIAL_HEADERS } from '../credentials';
import type { CorsConfig } from './config';

const escape = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
/** Request headers a page may send: what the gateway reads (credentials, request id, CSRF preflight). */
const ALLOWED_HEADER = new RegExp(
  `^(content-type|accept|x-request-id|apollo-require-preflight|x-apollo-operation-name|${CREDENTIAL_HEADERS.map((h) => `${escape(h)}(-[a-z0-9_-]+)?`).join('|')})$`,
);
/** Response headers pages may read beside the safelisted ones. */
const EXPOSED = 'retry-after, x-request-id';

export interface CorsPolicy {
  /**
   * Adds the CORS headers the request earns, and answers a preflight. Returns true when the
   * request was a preflight and has been answered.
   */
  handle(req: IncomingMessage, res: ServerResponse): boolean;
}

export function createCorsPolicy(c: CorsConfig): CorsPolicy {
  const any = c.origins.includes('*');
  const allowed = new Set(c.origins);
  return {
    handle(req, res) {
      const origin = req.headers.origin;
      if (c.origins.length === 0 || origin === undefined) return false;
      res.setHeader('vary', 'Origin');
      if (!any && !allowed.has(origin)) return false;
      res.setHeader('access-control-allow-origin', any && !c.credentials ? '*' : origin);
      if (c.credentials) res.setHeader('access-control-allow-credentials', 'true');
      const preflight = req.method === 'OPTIONS' && req.headers['access-control-request-method'] !== undefined;
      if (!preflight) {
        res.setHeader('access-control-expose-headers', EXPOSED);
        return false;
      }
      // Allowed request headers: the asked-for ones the gateway reads (a wildcard cannot express
      // the per-backend `<credential header>-<backend>` names, and `*` is not honoured with credentials).
      const asked = String(req.headers['access-control-request-headers'] ?? '')
        .split(',')
        .map((h) => h.trim().toLowerCase())
        .filter((h) => ALLOWED_HEADER.test(h));
      res.writeHead(204, {
        'access-control-allow-methods': 'GET, POST, OPTIONS',
        'access-control-allow-headers': [...new Set(['content-type', 'x-request-id', 'apollo-require-preflight', ...CREDENTIAL_HEADERS, ...asked])].join(', '),
        'access-control-max-age': String(c.maxAgeSeconds),
        'content-length': '0',
      });
      res.end();
      return true;
    },
  };
}
