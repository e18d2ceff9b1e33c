/**
 * Hive Gateway with header propagation alone: no transport options, so subscriptions go to the
 * subgraph over Hive's HTTP transport, which speaks GraphQL over SSE (GET with
 * `Accept: text/event-stream`) and carries the propagated headers as it does for queries. Run by
 * the skipped test in test/federation/hive-gateway-sse.test.ts, to enable once the gateway serves
 * GraphQL over SSE (issue 19 item 4, second bullet).
 */
import { defineConfig } from '@graphql-hive/gateway';

const SUBGRAPH = 'volumes';
const CREDENTIAL = /^x-(auth|nomad|memory)-token(-[a-z0-9_-]+)?$/;

export const gatewayConfig = defineConfig({
  propagateHeaders: {
    fromClientToSubgraphs({ request, subgraphName }) {
      if (subgraphName !== SUBGRAPH) return;
      const out: Record<string, string> = {};
      for (const [name, value] of request.headers) if (CREDENTIAL.test(name) || name === 'x-request-id') out[name] = value;
      return out;
    },
  },
});
