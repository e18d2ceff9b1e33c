/**
 * `GET /graphql/schema.graphql`: the API schema's SDL (server/api-schema.ts), the same text as
 * `schema/generated/api.graphql`, served whatever `INTROSPECTION` says, for codegen and schema
 * tools pointed at a gateway whose introspection is off. `SCHEMA_SDL=false` leaves the route out.
 * Printed at the first request, not at start; an ETag lets tools revalidate for a 304. POST is
 * answered as GET: graphql-tools' URL loader (GraphQL Inspector's CLI) fetches an SDL URL with the
 * method it would introspect with, POST unless told `--method GET`.
 */
import { createHash } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { GraphQLSchema } from 'graphql';
import { API_SCHEMA_PATH, apiSchemaTextOf } from '../api-schema';
import { sendJson } from './respond';

/** The printed schema and its entity tag. */
interface Printed {
  body: Buffer;
  etag: string;
}

const METHODS = new Set(['GET', 'HEAD', 'POST']);

/** Whether `If-None-Match` names `etag` (or is `*`). */
const matches = (header: string | undefined, etag: string): boolean =>
  header !== undefined &&
  header
    .split(',')
    .map((t) => t.trim().replace(/^W\//, ''))
    .some((t) => t === etag || t === '*');

/** Serves {@link API_SCHEMA_PATH} if the request is for it; returns whether it did. */
export function createApiSchemaRoute(
  schema: GraphQLSchema,
): (req: IncomingMessage, res: ServerResponse, url: URL) => boolean {
  let printed: Printed | undefined;
  const print = (): Printed => {
    const body = Buffer.from(apiSchemaTextOf(schema));
    return { body, etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 32)}"` };
  };
  return (req, res, url) => {
    if (url.pathname !== API_SCHEMA_PATH) return false;
    if (!METHODS.has(req.method ?? '')) {
      sendJson(res, 405, { error: 'method not allowed' }, { allow: [...METHODS].join(', ') });
      return true;
    }
    printed ??= print();
    const headers = {
      etag: printed.etag,
      // Revalidate every time: a new release of the gateway may change the schema under the same URL.
      'cache-control': 'no-cache',
      'x-content-type-options': 'nosniff',
    };
    if (matches(req.headers['if-none-match'], printed.etag)) {
      res.writeHead(304, headers);
      res.end();
      return true;
    }
    res.writeHead(200, {
      ...headers,
      'content-type': 'text/plain; charset=utf-8',
      'content-length': printed.body.length,
    });
    res.end(req.method === 'HEAD' ? undefined : printed.body);
    return true;
  };
}
