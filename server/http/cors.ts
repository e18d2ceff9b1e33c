/**
 * CORS, off unless origins are listed (docs/conformance.md: CORS and CSRF). With it on, a
 * browser page from a listed origin may call `/graphql` with the headers the gateway reads;
 * other origins get no CORS headers, so their browsers keep the answer from the page. Which
 * origins are listed is the origin rule's (server/http/origin.ts: `CORS_ORIGINS` and
 * `WS_ALLOWED_ORIGINS`, one list for every transport). Every preflight is CORS's to answer: one from
 * an origin not listed (or with CORS off) gets `403` `ORIGIN_NOT_ALLOWED`, so a browser's console
 * says why, rather than a GraphQL answer to an `OPTIONS`. CORS governs what browsers let pages read;
 * CSRF prevention (server/http/csrf.ts) applies either way.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { CREDENTIAL_HEADERS } from '../credentials';
import type { CorsConfig } from './config';
import { originRefusalBody, type OriginRule } from './origin';
import { sendJson } from './respond';

const escape = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
/**
 * Request headers a page may send: what the gateway reads (credentials, request id, CSRF preflight,
 * W3C trace context and baggage) and what browser clients add (Apollo Client's client awareness).
 */
const ALLOWED_HEADER = new RegExp(
  `^(content-type|accept|x-request-id|apollo-require-preflight|x-apollo-operation-name|traceparent|tracestate|baggage|apollographql-client-name|apollographql-client-version|${CREDENTIAL_HEADERS.map((h) => `${escape(h)}(-[a-z0-9_-]+)?`).join('|')})$`,
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

/** @param c credentials and preflight cache time (its `origins` are in `origins`) @param origins the origin rule, whose listed origins get CORS headers */
export function createCorsPolicy(
  c: Pick<CorsConfig, 'credentials' | 'maxAgeSeconds'>,
  origins: OriginRule,
): CorsPolicy {
  const any = origins.wildcard;
  return {
    handle(req, res) {
      const origin = req.headers.origin;
      if (origin === undefined) return false;
      const preflight = req.method === 'OPTIONS' && req.headers['access-control-request-method'] !== undefined;
      if (origins.listsAny) res.setHeader('vary', 'Origin');
      if (!origins.listsAny || !origins.listed(origin)) {
        if (preflight) sendJson(res, 403, originRefusalBody());
        return preflight;
      }
      res.setHeader('access-control-allow-origin', any && !c.credentials ? '*' : origin);
      if (c.credentials) res.setHeader('access-control-allow-credentials', 'true');
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
        'access-control-allow-headers': [
          ...new Set(['content-type', 'x-request-id', 'apollo-require-preflight', ...CREDENTIAL_HEADERS, ...asked]),
        ].join(', '),
        'access-control-max-age': String(c.maxAgeSeconds),
        'content-length': '0',
      });
      res.end();
      return true;
    },
  };
}
