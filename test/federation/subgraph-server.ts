/**
 * A federation subgraph for tests: `buildSubgraphSchema` from `@apollo/subgraph`, served over
 * HTTP by `@apollo/server` on a free loopback port, recording every GraphQL request it gets so a
 * test can count what the gateway asked of it.
 */
import { ApolloServer } from '@apollo/server';
import { ApolloServerPluginInlineTraceDisabled } from '@apollo/server/plugin/disabled';
import { startStandaloneServer } from '@apollo/server/standalone';
import { buildSubgraphSchema } from '@apollo/subgraph';
import { parse } from 'graphql';
import type { IncomingMessage } from 'node:http';

/** `@apollo/subgraph`'s resolver map (its type is not exported from the package root). */
export type SubgraphResolvers = NonNullable<
  Extract<Parameters<typeof buildSubgraphSchema>[0], { typeDefs: unknown }>['resolvers']
>;

/** One GraphQL request a subgraph received. */
export interface SubgraphRequest {
  /** The operation's text as sent by the gateway's query planner. */
  query: string;
  operationName?: string;
  variables: Record<string, unknown>;
  /** Request headers, names lower-cased. */
  headers: Record<string, string>;
  /** How many `representations` an `_entities` fetch carried; 0 for a root-field fetch. */
  representations: number;
}

/** What {@link startSubgraphServer} serves. */
export interface SubgraphServerOptions {
  /** The subgraph's name in the supergraph. */
  name: string;
  /** Federation 2 SDL (with `extend schema @link(url: "https://specs.apollo.dev/federation/v2.x", …)`). */
  typeDefs: string;
  /** Resolvers, including `__resolveReference` for resolvable entities. */
  resolvers: SubgraphResolvers;
}

/** A running subgraph: `{ name, url, typeDefs }` is what composition and the gateway take. */
export interface RunningSubgraph {
  name: string;
  /** `http://127.0.0.1:<port>/` */
  url: string;
  typeDefs: string;
  /** Requests received, oldest first (a copy). */
  requests(): SubgraphRequest[];
  /** Forgets the requests received so far (e.g. after warm-up). */
  resetRequests(): void;
  stop(): Promise<void>;
}

const headerRecord = (req: IncomingMessage): Record<string, string> => {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(req.headers)) if (v !== undefined) out[k] = Array.isArray(v) ? v.join(', ') : v;
  return out;
};

/** Starts a subgraph on `127.0.0.1` and a port the OS picks. */
export async function startSubgraphServer(options: SubgraphServerOptions): Promise<RunningSubgraph> {
  const seen: SubgraphRequest[] = [];
  const server = new ApolloServer<{ headers: Record<string, string> }>({
    schema: buildSubgraphSchema({ typeDefs: parse(options.typeDefs), resolvers: options.resolvers }),
    // Tests own shutdown; Apollo's signal handlers would outlive the test.
    stopOnTerminationSignals: false,
    plugins: [
      // Traces are for Apollo's usage reporting, which no test gateway asks for.
      ApolloServerPluginInlineTraceDisabled(),
      {
        // Recorded once the document is known, so the count is of GraphQL requests served.
        async requestDidStart(rc) {
          const variables = rc.request.variables ?? {};
          const reps = variables['representations'];
          seen.push({
            query: rc.request.query ?? '',
            operationName: rc.request.operationName ?? undefined,
            variables,
            headers: rc.contextValue.headers,
            representations: Array.isArray(reps) ? reps.length : 0,
          });
        },
      },
    ],
  });
  const { url } = await startStandaloneServer(server, {
    listen: { port: 0, host: '127.0.0.1' },
    context: async ({ req }) => ({ headers: headerRecord(req) }),
  });
  return {
    name: options.name,
    url,
    typeDefs: options.typeDefs,
    requests: () => seen.slice(),
    resetRequests: () => void seen.splice(0),
    stop: () => server.stop(),
  };
}
