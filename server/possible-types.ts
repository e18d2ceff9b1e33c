/**
 * `GET /graphql/possible-types.json`: every union and interface of the schema with its member types,
 * as Apollo Client's `possibleTypes` option (and urql's graphcache `schema`-less setups) take them.
 * Computed once from the executable schema when the gateway starts, so it always matches what the
 * gateway serves, including each backend's own members; federation's `_Entity` is left out, as in
 * `schema/generated/possible-types.ts` (docs/clients.md).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { isAbstractType, type GraphQLSchema } from 'graphql';

/** Where the JSON is served: under the GraphQL path, so a router or ingress that forwards `/graphql` forwards it too. */
export const POSSIBLE_TYPES_PATH = '/graphql/possible-types.json';

/** Types that are the federation machinery's, not the API's. */
const FEDERATION_TYPES = new Set(['_Entity', '_Any', '_Service']);

/** Each abstract type's members, names sorted, in the shape `{ possibleTypes: { Union: [Member …] } }`. */
export function possibleTypesOf(schema: GraphQLSchema): { possibleTypes: Record<string, string[]> } {
  const possibleTypes: Record<string, string[]> = {};
  for (const name of Object.keys(schema.getTypeMap()).sort()) {
    const type = schema.getType(name)!;
    if (name.startsWith('__') || FEDERATION_TYPES.has(name) || !isAbstractType(type)) continue;
    possibleTypes[name] = schema
      .getPossibleTypes(type)
      .map((t) => t.name)
      .sort();
  }
  return { possibleTypes };
}

/** Serves {@link POSSIBLE_TYPES_PATH} if the request is for it; returns whether it did. */
export function createPossibleTypesHandler(
  schema: GraphQLSchema,
): (req: IncomingMessage, res: ServerResponse, url: URL) => boolean {
  const body = Buffer.from(JSON.stringify(possibleTypesOf(schema), null, 2));
  return (req, res, url) => {
    if (url.pathname !== POSSIBLE_TYPES_PATH) return false;
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.writeHead(405, { allow: 'GET, HEAD', 'content-type': 'application/json; charset=utf-8' });
      res.end(JSON.stringify({ error: 'method not allowed' }));
      return true;
    }
    res.writeHead(200, {
      'content-type': 'application/json; charset=utf-8',
      'content-length': body.length,
      'cache-control': 'no-cache',
    });
    res.end(req.method === 'HEAD' ? undefined : body);
    return true;
  };
}
