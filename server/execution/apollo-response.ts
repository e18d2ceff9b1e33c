/**
 * A result the gateway executed itself, answered as Apollo Server 5 answers the results of its own
 * execution, so that a client cannot tell the two apart. Compiled execution answers from the public
 * `responseForOperation` hook, whose response Apollo sends as it is: it merges the response's HTTP
 * head and calls `willSendResponse`, nothing else. What Apollo does after its own `execute`
 * (@apollo/server's requestPipeline.ts) is therefore done here, on its public contracts:
 * - the errors go to the `didEncounterErrors` given (Apollo calls no plugin's hook for them), with
 *   `errors` set on the request context as Apollo sets it;
 * - each error goes to the server's `formatError`, given Apollo's own formatting of it (its JSON,
 *   `extensions.code` INTERNAL_SERVER_ERROR when it has none, `extensions.http` taken out); a
 *   formatter that throws gives Apollo's "Internal server error";
 * - an error's `extensions.http` (status, headers) goes to the response's head;
 * - errors with no data at all are answered 400 unless an error set a status (Apollo's
 *   `status400ForVariableCoercionErrors`, on by default in Apollo Server 5).
 * Not done: turning variable errors into BAD_USER_INPUT (a request whose variables do not coerce is
 * left to Apollo's own execution) and stack traces (`includeStacktraceInErrorResponses`: off here).
 * `test/gateway/compiled-execution-path.test.ts` compares such answers with Apollo's own over HTTP
 * (status, headers, body, what `didEncounterErrors` is told), `test/gateway/execution-engines.test.ts`
 * the gateway's.
 */
import {
  HeaderMap,
  type BaseContext,
  type GraphQLRequestContext,
  type GraphQLRequestContextDidEncounterErrors,
  type GraphQLResponse,
  type HTTPGraphQLHead,
} from '@apollo/server';
import type { ExecutionResult, GraphQLError, GraphQLFormattedError } from 'graphql';
import { ErrorCode } from '../../adapters/contract/errors';
import { internalError } from '../../adapters/contract/graphql-errors';

/** How {@link apolloResponse} formats and reports errors: what the server was given. */
export interface ApolloResponseOptions<C extends BaseContext> {
  /** The server's `formatError` (the one given to Apollo). @default Apollo's formatting unchanged */
  formatError?: (formatted: GraphQLFormattedError, error: unknown) => GraphQLFormattedError;
  /** Told of a result's errors, as plugins' `didEncounterErrors` are of Apollo's own execution's. @default nobody */
  didEncounterErrors?: (rc: GraphQLRequestContextDidEncounterErrors<C>) => Promise<void>;
}

/** An `extensions.http` Apollo takes into the response's head: a status number, headers in a Map. */
function isHead(x: unknown): x is Partial<HTTPGraphQLHead> {
  if (x === null || typeof x !== 'object') return false;
  const h = x as { status?: unknown; headers?: unknown };
  return (!('status' in h) || typeof h.status === 'number') && (!('headers' in h) || h.headers instanceof Map);
}

/** `result` as the response Apollo would send for its own execution of the request `rc`. */
export async function apolloResponse<C extends BaseContext>(
  rc: GraphQLRequestContext<C>,
  result: ExecutionResult,
  o: ApolloResponseOptions<C>,
): Promise<GraphQLResponse> {
  const http: HTTPGraphQLHead = { status: undefined, headers: new HeaderMap() };
  const errors = result.errors;
  // As it is: a copy with `errors` added after the spread would be a shape V8 keeps through scavenges.
  if (!errors) return { http, body: { kind: 'single', singleResult: result } };
  (rc as { errors?: readonly GraphQLError[] }).errors = errors;
  await o.didEncounterErrors?.(rc as GraphQLRequestContextDidEncounterErrors<C>);
  const formatted = errors.map((e): GraphQLFormattedError => {
    try {
      const extensions: Record<string, unknown> = { ...e.extensions, code: e.extensions?.code ?? ErrorCode.Internal };
      if (isHead(extensions.http)) {
        if (extensions.http.status) http.status = extensions.http.status;
        for (const [name, value] of extensions.http.headers ?? []) http.headers.set(name, value);
        delete extensions.http;
      }
      const own = { ...e.toJSON(), extensions };
      return o.formatError ? o.formatError(own, e) : own;
    } catch {
      // Apollo's answer, word for word (the gateway's own internal answer has the same).
      return internalError();
    }
  });
  if (errors.length > 0 && result.data === undefined && !http.status) http.status = 400;
  return { http, body: { kind: 'single', singleResult: { ...result, errors: formatted } } };
}
