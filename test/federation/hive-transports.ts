/**
 * A client at a router for each transport Hive Gateway offers its clients, each the real client
 * library: graphql-ws (credentials in `connection_init`), graphql-sse in its distinct connections
 * mode (GraphQL over SSE, credentials as headers) and urql's fetch transport asking for
 * `multipart/mixed` only (incremental delivery over HTTP, credentials as headers; queries and
 * mutations: Hive streams no subscription over it).
 */
import { Client as UrqlClient, fetchExchange } from '@urql/core';
import { OperationTypeNode, getOperationAST, parse, type ExecutionResult } from 'graphql';
import { createClient as createSseClient } from 'graphql-sse';
import { createClient as createWsClient } from 'graphql-ws';
import WebSocket from 'ws';

/** One operation's results as they arrive. */
export interface ClientStream {
  /** Each result, in arrival order; a transport error is pushed as `{ error }`. */
  readonly results: Array<ExecutionResult<any> | { error: string }>;
  /** Unsubscribes and closes the client. */
  close(): Promise<void>;
  /** The `content-type` of each HTTP response (multipart only). */
  readonly responseTypes: string[];
}

/** How a client reaches the router: the transport and where its credentials go. */
export type Transport = 'graphql-ws' | 'sse' | 'multipart';

/**
 * Runs `query` at `url` (the router's HTTP endpoint) over `transport`, `credentials` as the
 * `connection_init` payload (graphql-ws) or as request headers (SSE, multipart), keys as given.
 */
export function openClientStream(
  transport: Transport,
  url: string,
  query: string,
  credentials: Record<string, string>,
): ClientStream {
  const results: ClientStream['results'] = [];
  const responseTypes: string[] = [];
  const sink = {
    next: (r: ExecutionResult<any>) => void results.push(r),
    error: (e: unknown) => void results.push({ error: errorText(e) }),
    complete: () => undefined,
  };
  switch (transport) {
    case 'graphql-ws': {
      const client = createWsClient({
        url: url.replace(/^http/, 'ws'),
        webSocketImpl: WebSocket,
        retryAttempts: 0,
        connectionParams: credentials,
      });
      const stop = client.subscribe({ query }, sink);
      return { results, responseTypes, close: async () => (stop(), client.dispose()) };
    }
    case 'sse': {
      const client = createSseClient({ url, retryAttempts: 0, headers: credentials });
      const stop = client.subscribe({ query }, sink);
      return { results, responseTypes, close: async () => (stop(), client.dispose()) };
    }
    case 'multipart': {
      const client = new UrqlClient({
        url,
        exchanges: [fetchExchange],
        // urql asks for JSON, SSE or multipart; only multipart here.
        fetchOptions: { headers: { ...credentials, accept: 'multipart/mixed' } },
        fetch: async (input, init) => {
          const res = await fetch(input, init);
          responseTypes.push(res.headers.get('content-type') ?? '');
          return res;
        },
      });
      const isMutation = getOperationAST(parse(query))?.operation === OperationTypeNode.MUTATION;
      const source = isMutation
        ? client.mutation(query, {})
        : client.query(query, {}, { requestPolicy: 'network-only' });
      const subscription = source.subscribe((r) => {
        if (r.error?.networkError) return sink.error(r.error.networkError);
        sink.next({ data: r.data, ...(r.error ? { errors: r.error.graphQLErrors } : {}) });
      });
      return { results, responseTypes, close: async () => subscription.unsubscribe() };
    }
  }
}

/** graphql-ws hands a CloseEvent, graphql-sse an Error or an array of GraphQL errors. */
function errorText(e: unknown): string {
  if (e instanceof Error) return e.message;
  if (typeof e === 'object' && e !== null && 'code' in e) {
    const { code, reason } = e as { code: number; reason?: string };
    return `closed ${code} ${reason ?? ''}`.trim();
  }
  return JSON.stringify(e);
}
