/**
 * Hive Gateway's configuration for the volumes subgraph, as docs/federation.md shows it and as
 * test/federation/hive-gateway.test.ts runs it with the `hive-gateway` CLI:
 * `hive-gateway supergraph supergraph.graphql -c gateway.config.ts`. No plugin.
 *
 * Queries and mutations go to the subgraph over HTTP with the caller's credential headers
 * (`propagateHeaders`); subscriptions go over graphql-ws, with the same headers on the WebSocket
 * upgrade, where the subgraph reads them as it reads HTTP's.
 */
import { defineConfig } from '@graphql-hive/gateway';

/** The subgraph's name in the supergraph. */
const SUBGRAPH = 'volumes';

/** Credential header names, as a pattern (Hive hands a client's headers over lower-cased). */
const CREDENTIAL = /^x-(auth|nomad|memory)-token(-[a-z0-9_-]+)?$/;

/**
 * Names for the subscription socket's upgrade. Hive's ws transport takes a fixed list of
 * interpolated headers, not a pattern, so per-backend names are listed: the backend ids from
 * `VOLUME_BACKEND_IDS` (comma-separated, e.g. `nomad-east,openstack`). A name the caller did not
 * send interpolates to nothing and is left out.
 */
const credentialNames = (): string[] => {
  const ids = (process.env.VOLUME_BACKEND_IDS ?? '')
    .split(',')
    .map((s) => s.trim().toLowerCase())
    .filter(Boolean);
  const kinds = ['x-auth-token', 'x-nomad-token', 'x-memory-token'];
  return [...kinds, ...ids.flatMap((id) => kinds.map((k) => `${k}-${id}`))];
};

export const gatewayConfig = defineConfig({
  propagateHeaders: {
    fromClientToSubgraphs({ request, subgraphName }) {
      if (subgraphName !== SUBGRAPH) return;
      const out: Record<string, string> = {};
      for (const [name, value] of request.headers)
        if (CREDENTIAL.test(name) || name === 'x-request-id') out[name] = value;
      return out;
    },
  },
  transportEntries: {
    [SUBGRAPH]: {
      options: {
        subscriptions: {
          // graphql-ws at the subgraph's own URL (http → ws); one socket per distinct set of header values.
          kind: 'ws',
          headers: credentialNames().map((n): [string, string] => [n, `{context.headers.${n}}`]),
        },
      },
    },
  },
});
