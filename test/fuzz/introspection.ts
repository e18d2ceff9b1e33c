/**
 * The schema as the gateway serves it, read over HTTP with the standard introspection query.
 * Generators are built from this, never from the SDL files or field names, so they follow any
 * rename (API v2) without edits.
 */
import { buildClientSchema, getIntrospectionQuery, type GraphQLSchema, type IntrospectionQuery } from 'graphql';
import { exchange } from './http-client';

export async function introspect(origin: string, headers: Record<string, string> = {}): Promise<GraphQLSchema> {
  const r = await exchange(origin, {
    method: 'POST',
    target: '/graphql',
    headers: [['content-type', 'application/json'], ...Object.entries(headers)],
    body: JSON.stringify({ query: getIntrospectionQuery() }),
  });
  if (!r.response) throw new Error(`introspection got no answer: ${JSON.stringify(r.failure)}`);
  const body = JSON.parse(r.response.text) as { data?: IntrospectionQuery; errors?: unknown };
  if (!body.data) {
    throw new Error(
      `introspection failed (is it off? enable it in FUZZ_GATEWAY_OPTIONS (limits.introspection), test/fuzz/world.ts): ${r.response.status} ${r.response.text.slice(0, 500)}`,
    );
  }
  return buildClientSchema(body.data);
}
