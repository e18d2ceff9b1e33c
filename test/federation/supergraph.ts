/**
 * Federation with Apollo's own tools, unmodified: `@apollo/composition` composes subgraphs into a
 * supergraph, and `@apollo/gateway` (inside `@apollo/server`, on a free loopback port) plans and
 * runs queries over them, forwarding the caller's credential headers as a router would.
 */
import { composeServices } from '@apollo/composition';
import { ApolloGateway, RemoteGraphQLDataSource } from '@apollo/gateway';
import { ApolloServer } from '@apollo/server';
import { startStandaloneServer } from '@apollo/server/standalone';
import { parse, type GraphQLError } from 'graphql';
import type { IncomingHttpHeaders } from 'node:http';

/** A subgraph as composition and the gateway see it. */
export interface SubgraphDefinition {
  name: string;
  url: string;
  /** Federation 2 SDL. */
  typeDefs: string;
}

/** A composition hint (`@apollo/composition` does not export the class from its root). */
export type CompositionHint = NonNullable<ReturnType<typeof composeServices>['hints']>[number];

/** What `composeServices` said: the supergraph when it composed, else errors; hints either way when given. */
export interface Composition {
  supergraphSdl?: string;
  errors: readonly GraphQLError[];
  hints: readonly CompositionHint[];
}

/** Composes `subgraphs` with `@apollo/composition`'s `composeServices`. */
export function composeSupergraph(subgraphs: readonly SubgraphDefinition[]): Composition {
  const result = composeServices(subgraphs.map((s) => ({ name: s.name, url: s.url, typeDefs: parse(s.typeDefs) })));
  if (result.errors) return { errors: result.errors, hints: [] };
  return { supergraphSdl: result.supergraphSdl, errors: [], hints: result.hints };
}

/** A composition that failed, with the composer's messages. */
export class CompositionFailedError extends Error {
  readonly code = 'COMPOSITION_FAILED';
  constructor(readonly errors: readonly GraphQLError[]) {
    super(`composition failed: ${errors.map((e) => e.message).join('; ')}`);
    this.name = 'CompositionFailedError';
  }
}

/**
 * Headers a router forwards to subgraphs by default here: the OpenStack token, the per-backend
 * Nomad tokens (`X-Nomad-Token-<backend id>`) and the request id. Matched lower-cased.
 */
export const DEFAULT_FORWARDED_HEADERS: ReadonlyArray<string | RegExp> = [
  'x-auth-token',
  /^x-nomad-token-/,
  'x-request-id',
];

/** Options of {@link startFederatedGateway}. */
export interface FederatedGatewayOptions {
  /** A composed supergraph (static: no polling, no Apollo uplink). */
  supergraphSdl: string;
  /** Incoming headers copied to every subgraph fetch. @default DEFAULT_FORWARDED_HEADERS */
  forwardHeaders?: ReadonlyArray<string | RegExp>;
}

/** One fetch the gateway's query planner sent to a subgraph. */
export interface SubgraphFetch {
  /** The subgraph's name in the supergraph. */
  subgraph: string;
  /** How many `representations` an `_entities` fetch carried; 0 for a root-field fetch. */
  representations: number;
}

/** A running `@apollo/gateway` behind `@apollo/server`. */
export interface RunningFederatedGateway {
  /** `http://127.0.0.1:<port>/` */
  url: string;
  /** POSTs a GraphQL operation; the status and parsed body. */
  post(
    query: string,
    variables?: Record<string, unknown>,
    headers?: Record<string, string>,
  ): Promise<{ status: number; body: any }>;
  /** Fetches sent to subgraphs, oldest first (a copy): counts subgraphs that record nothing themselves. */
  fetches(): SubgraphFetch[];
  /** Forgets the fetches recorded so far. */
  resetFetches(): void;
  stop(): Promise<void>;
}

interface GatewayContext {
  forwarded: Record<string, string>;
}

function pickHeaders(headers: IncomingHttpHeaders, rules: ReadonlyArray<string | RegExp>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (typeof value !== 'string') continue;
    if (rules.some((r) => (typeof r === 'string' ? r === name : r.test(name)))) out[name] = value;
  }
  return out;
}

/** Starts the gateway over `supergraphSdl` on `127.0.0.1` and a port the OS picks. */
export async function startFederatedGateway(options: FederatedGatewayOptions): Promise<RunningFederatedGateway> {
  const rules = options.forwardHeaders ?? DEFAULT_FORWARDED_HEADERS;
  const fetches: SubgraphFetch[] = [];
  const gateway = new ApolloGateway({
    supergraphSdl: options.supergraphSdl,
    buildService: ({ name, url }) =>
      new RemoteGraphQLDataSource<GatewayContext>({
        url,
        willSendRequest({ request, context }) {
          const reps = request.variables?.['representations'];
          fetches.push({ subgraph: name, representations: Array.isArray(reps) ? reps.length : 0 });
          // Health checks and schema loads have no caller, hence no forwarded headers.
          for (const [name, value] of Object.entries((context as Partial<GatewayContext>).forwarded ?? {}))
            request.http?.headers.set(name, value);
        },
      }),
  });
  const server = new ApolloServer<GatewayContext>({ gateway, stopOnTerminationSignals: false });
  const { url } = await startStandaloneServer(server, {
    listen: { port: 0, host: '127.0.0.1' },
    context: async ({ req }) => ({ forwarded: pickHeaders(req.headers, rules) }),
  });
  return {
    url,
    async post(query, variables, headers = {}) {
      const res = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers },
        body: JSON.stringify({ query, variables }),
      });
      return { status: res.status, body: await res.json() };
    },
    fetches: () => fetches.map((f) => ({ ...f })),
    resetFetches: () => void fetches.splice(0),
    // Stops the gateway too (Apollo Server owns it).
    stop: () => server.stop(),
  };
}

/** Composes `subgraphs` and starts a gateway over them. @throws CompositionFailedError */
export async function startSupergraph(
  subgraphs: readonly SubgraphDefinition[],
  options: Omit<FederatedGatewayOptions, 'supergraphSdl'> = {},
): Promise<RunningFederatedGateway & { composition: Composition }> {
  const composition = composeSupergraph(subgraphs);
  if (composition.supergraphSdl === undefined) throw new CompositionFailedError(composition.errors);
  const gateway = await startFederatedGateway({ ...options, supergraphSdl: composition.supergraphSdl });
  return { ...gateway, composition };
}

/** Stops everything given, in order (pass the gateway first, then the subgraphs); skips undefined. */
export async function stopAll(...running: Array<{ stop(): Promise<void> } | undefined>): Promise<void> {
  for (const r of running) await r?.stop();
}
