/**
 * Hive Gateway's configuration for the volumes subgraph, as docs/federation.md shows it and as
 * test/federation/hive-gateway.test.ts runs it with the `hive-gateway` CLI:
 * `hive-gateway supergraph supergraph.graphql -c gateway.config.ts`.
 *
 * Queries and mutations go to the subgraph over HTTP with the caller's credential headers;
 * subscriptions go over graphql-ws (the subgraph serves no subscriptions over HTTP), with the same
 * credentials in `connection_init`, under the header names the subgraph reads.
 */
import { defineConfig, type GatewayPlugin } from '@graphql-hive/gateway';

/** The subgraph's name in the supergraph. */
const SUBGRAPH = 'volumes';

/** Credential header names, as a pattern (HTTP: Hive hands them over lower-cased). */
const CREDENTIAL = /^x-(auth|nomad)-token(-[a-z0-9_-]+)?$/;

/**
 * Names for `connection_init`. Hive's ws transport takes a fixed map of interpolated values, not a
 * pattern, so per-backend names are listed: the backend ids from `VOLUME_BACKEND_IDS`
 * (comma-separated, e.g. `nomad-east,openstack`). A name the caller did not send interpolates to
 * an empty string and is left out.
 */
const credentialNames = (): string[] => {
  const ids = (process.env.VOLUME_BACKEND_IDS ?? '').split(',').map((s) => s.trim().toLowerCase()).filter(Boolean);
  return ['x-auth-token', 'x-nomad-token', ...ids.flatMap((id) => [`x-auth-token-${id}`, `x-nomad-token-${id}`])];
};

export const gatewayConfig = defineConfig({
  propagateHeaders: {
    fromClientToSubgraphs({ request, subgraphName }) {
      if (subgraphName !== SUBGRAPH) return;
      const out: Record<string, string> = {};
      for (const [name, value] of request.headers) if (CREDENTIAL.test(name) || name === 'x-request-id') out[name] = value;
      return out;
    },
  },
  plugins: (): GatewayPlugin[] => [
    {
      // A client's own graphql-ws `connection_init` payload becomes `context.headers` with its keys
      // as sent ("X-Auth-Token"); lower-case them, as HTTP headers are, so one interpolation serves both.
      onContextBuilding({ context, extendContext }) {
        const headers = (context as { headers?: Record<string, unknown> }).headers;
        if (!headers) return;
        const lower: Record<string, unknown> = {};
        for (const [k, v] of Object.entries(headers)) lower[k.toLowerCase()] = v;
        extendContext({ headers: lower } as never);
      },
    },
  ],
  transportEntries: {
    [SUBGRAPH]: {
      options: {
        subscriptions: {
          // graphql-ws at the subgraph's own URL (http → ws); `location` would override the path.
          kind: 'ws',
          options: {
            connectionParams: Object.fromEntries(credentialNames().map((n) => [n, `{context.headers.${n}}`])),
          },
        },
      },
    },
  },
});
