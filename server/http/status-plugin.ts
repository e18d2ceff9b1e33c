/**
 * GraphQL over HTTP's status rule for clients that accept only `application/json` (not
 * `application/graphql-response+json`): parse, validation and variable errors are answered 200, where
 * Apollo would send 400. Errors of the HTTP request's own parameters keep their 400.
 */
import type { ApolloServerPlugin } from '@apollo/server';
import { PRE_EXECUTION_CODES } from '../limits';

/** Errors in the GraphQL document or its variables (not in the HTTP request's parameters). */
const DOCUMENT_ERROR_CODES: ReadonlySet<string> = new Set([
  'GRAPHQL_PARSE_FAILED',
  'GRAPHQL_VALIDATION_FAILED',
  'BAD_USER_INPUT',
  ...PRE_EXECUTION_CODES,
]);

/** The Apollo plugin that turns a document error's 400 into 200 for `application/json` clients. */
export function documentErrorStatusPlugin<C extends object>(): ApolloServerPlugin<C> {
  return {
    async requestDidStart() {
      return {
        async willSendResponse(rc) {
          const accept = rc.request.http?.headers.get('accept') ?? '';
          const errors = rc.response.body.kind === 'single' ? rc.response.body.singleResult.errors : undefined;
          if (
            rc.response.http.status === 400 &&
            !accept.includes('application/graphql-response+json') &&
            errors?.every((e) => DOCUMENT_ERROR_CODES.has(String(e.extensions?.code)))
          ) {
            rc.response.http.status = 200;
          }
        },
      };
    },
  };
}
