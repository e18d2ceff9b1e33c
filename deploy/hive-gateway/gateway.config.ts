/**
 * Hive Gateway in front of the volume gateway (the `volumes` subgraph): every caller's credentials
 * reach the subgraph, whichever transport the caller uses at Hive (HTTP, GraphQL over SSE,
 * multipart, graphql-ws) and whatever the case of its header or `connection_init` key names.
 * Run: `hive-gateway supergraph supergraph.graphql -c gateway.config.ts` (docs/federation.md).
 *
 * One rule, `propagateHeaders`, serves queries, mutations and subscriptions: with no
 * `transportEntries`, Hive sends each subgraph operation over HTTP, a subscription as GraphQL over
 * SSE, with the propagated headers on the request.
 */
import { defineConfig } from '@graphql-hive/gateway';
import { GraphQLError } from 'graphql';

/** The subgraph's name in the supergraph. */
const SUBGRAPH = 'volumes';

/**
 * The gateway's credential headers, `x-<kind>-token` or `x-<kind>-token-<backend id>`, lower case,
 * for every backend kind (none is named here: a new kind needs no change).
 * (`x-request-id` needs no rule: Hive sends its own, the client's when it sent one.)
 */
const CREDENTIAL = /^x-[a-z0-9]+-token(-[a-z0-9_-]+)?$/;

/**
 * The caller's credentials, names lower-cased: its HTTP request's headers (for a graphql-ws
 * client, the upgrade request's) and, for a graphql-ws client, its `connection_init` payload,
 * whose keys Hive keeps as the client wrote them (`X-<Kind>-Token`, mixed case). A name given twice with two
 * values, or a credential that is not a string, is refused, as the gateway refuses it.
 */
function credentials(request: Request, connectionParams: Record<string, unknown> = {}): Record<string, string> {
  const out: Record<string, string> = {};
  const entries: Array<[string, unknown]> = [...request.headers, ...Object.entries(connectionParams)];
  for (const [key, value] of entries) {
    const name = key.toLowerCase();
    if (!CREDENTIAL.test(name)) continue;
    if (typeof value !== 'string')
      throw new GraphQLError(`${name} must be a string`, { extensions: { code: 'BAD_USER_INPUT' } });
    if (out[name] !== undefined && out[name] !== value)
      throw new GraphQLError(`${name} is given twice with different values (names are case-insensitive)`, {
        extensions: { code: 'BAD_USER_INPUT' },
      });
    out[name] = value;
  }
  return out;
}

export const gatewayConfig = defineConfig({
  propagateHeaders: {
    fromClientToSubgraphs({ request, context, subgraphName }) {
      // Storage tokens go to the volumes subgraph only.
      if (subgraphName !== SUBGRAPH) return;
      return credentials(request, context.connectionParams);
    },
  },
});
