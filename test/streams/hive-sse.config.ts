/**
 * Hive Gateway with header propagation alone (no subscription transport, no plugin): its default
 * HTTP executor sends a subscription to this subgraph as GraphQL over SSE, with the propagated
 * credential headers (test/streams/hive-sse.test.ts).
 */
import { defineConfig } from '@graphql-hive/gateway';

const CREDENTIAL = /^x-(auth|nomad)-token(-[a-z0-9_-]+)?$/;

export const gatewayConfig = defineConfig({
  propagateHeaders: {
    fromClientToSubgraphs({ request }) {
      const out: Record<string, string> = {};
      for (const [name, value] of request.headers) if (CREDENTIAL.test(name)) out[name] = value;
      return out;
    },
  },
});
