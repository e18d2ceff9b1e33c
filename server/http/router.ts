/**
 * The node:http request listener: CORS, the GraphiQL page, the live status page, `/graphql`, the API schema,
 * `/healthz`, `/readyz`, `/metrics`, and JSON answers for everything that goes wrong on the way. Probes may
 * use HEAD on `/healthz` and `/readyz` (load balancers do): the GET answer's status and headers, no body.
 */
import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import { internalError } from '../../adapters/contract/graphql-errors';
import type { Logger } from '../logger';
import type { CorsPolicy } from './cors';
import { API_SCHEMA_PATH } from '../api-schema';
import { EdgeError } from './errors';
import type { GraphQLHttpHandler } from './graphql-handler';
import { sendEdgeError, sendJson } from './respond';

export interface Routes {
  /** Serves the GraphiQL page or its assets if the request is for them; returns whether it did. */
  graphiql(req: IncomingMessage, res: ServerResponse, url: URL): boolean;
  /** Serves the live status page (`/live`) or its assets if the request is for them; returns whether it did. */
  live?(req: IncomingMessage, res: ServerResponse, url: URL): boolean;
  /** Serves `/graphql/possible-types.json` (server/possible-types.ts) if the request is for it; returns whether it did. */
  possibleTypes?(req: IncomingMessage, res: ServerResponse, url: URL): boolean;
  /** Serves the API schema's SDL (server/http/api-schema-route.ts) if the request is for it; returns whether it did. Absent: not served (`SCHEMA_SDL=false`). */
  apiSchema?(req: IncomingMessage, res: ServerResponse, url: URL): boolean;
  graphql: GraphQLHttpHandler;
  /** `/readyz`: 200 when ready, 503 otherwise, with the details. */
  readiness(): Promise<{ ready: boolean } & Record<string, unknown>>;
  /** `/metrics` in the Prometheus text format. */
  metrics(): Promise<{ contentType: string; text: string }>;
}

/** Probes' methods: HEAD answers as GET does, and node:http leaves the body out. */
const PROBE_METHODS = new Set(['GET', 'HEAD']);

/** The paths the listener serves, for the 404 answer; the API schema's only when it is served. */
const routesServed = (apiSchema: boolean): string[] => [
  '/graphql',
  '/graphql/possible-types.json',
  ...(apiSchema ? [API_SCHEMA_PATH] : []),
  '/graphiql/assets/',
  '/live',
  '/live/assets/',
  '/healthz',
  '/readyz',
  '/metrics',
];

/** @param onRefused told of every request refused with an edge error (metrics); must not throw. */
export function createRequestListener(
  routes: Routes,
  cors: CorsPolicy,
  logger: Logger,
  onRefused?: (err: EdgeError) => void,
): RequestListener {
  const served = routesServed(routes.apiSchema !== undefined);
  return (req, res) => {
    const url = new URL(req.url ?? '/', 'http://gateway.invalid');
    if (url.pathname === '/graphql' && cors.handle(req, res)) return;
    // A browser asking for HTML at /graphql gets the bundled IDE; everything else is GraphQL.
    if (routes.graphiql(req, res, url)) return;
    if (routes.live?.(req, res, url)) return;
    if (routes.possibleTypes?.(req, res, url)) return;
    const route = async (): Promise<void> => {
      if (url.pathname === '/graphql') return routes.graphql(req, res, url);
      // In here, not with the pages above: printing the schema (at its first request) may throw.
      if (routes.apiSchema?.(req, res, url)) return;
      const probe = PROBE_METHODS.has(req.method ?? '');
      if (url.pathname === '/healthz' && probe) return sendJson(res, 200, { status: 'ok' });
      if (url.pathname === '/readyz' && probe) {
        const r = await routes.readiness();
        return sendJson(res, r.ready ? 200 : 503, r);
      }
      if (url.pathname === '/metrics' && req.method === 'GET') {
        const m = await routes.metrics();
        res.writeHead(200, { 'content-type': m.contentType });
        return void res.end(m.text);
      }
      sendJson(res, 404, { error: 'not found', routes: served });
    };
    route().catch((err: unknown) => {
      if (err instanceof EdgeError) {
        onRefused?.(err);
        if (!res.headersSent) sendEdgeError(res, err);
        return;
      }
      logger.error({ err }, 'request failed');
      if (!res.headersSent) sendJson(res, 500, { errors: [internalError()] });
      else res.destroy();
    });
  };
}
