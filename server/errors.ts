/**
 * Apollo's side of the one error formatter (adapters/contract/graphql-errors.ts): its
 * `formatError`, and the plugin that logs the errors it masks with the request's id, which
 * `formatError` is not given.
 */
import type { ApolloServerPlugin, GraphQLRequestListener } from '@apollo/server';
import type { GraphQLFormattedError } from 'graphql';
import type { GatewayError } from '../adapters/contract/errors';
import { formatGraphQLError, unexpectedCause } from '../adapters/contract/graphql-errors';
import type { GatewayContext } from '../domain/context';
import type { Logger } from './logger';

/** The typed reason behind a parse error, when there is one (the token limit: graphql-js reports it as a plain syntax error). */
type ParseErrorReason = (err: unknown) => GatewayError | undefined;

/** Apollo's `formatError`: the shared rule; unexpected errors are logged by {@link unexpectedErrorLog}. */
export function createFormatError(parseErrorReason?: ParseErrorReason) {
  return (_formatted: GraphQLFormattedError, error: unknown): GraphQLFormattedError =>
    formatGraphQLError(error, { parseErrorReason });
}

/**
 * The request listener that logs each error `formatError` answers as INTERNAL_SERVER_ERROR, with
 * the request id. Apollo calls `didEncounterErrors` before it formats the errors of a request it
 * executes; compiled execution calls it for the requests it answers (server/execution/compiled.ts).
 * One listener for every request: it reads everything from the request context.
 */
export function unexpectedErrorListener(
  logger: Logger,
  parseErrorReason?: ParseErrorReason,
): Required<Pick<GraphQLRequestListener<GatewayContext>, 'didEncounterErrors'>> {
  return {
    async didEncounterErrors(rc) {
      for (const e of rc.errors) {
        const u = unexpectedCause(e, parseErrorReason);
        if (u)
          logger.error(
            { err: u.cause, requestId: rc.contextValue.requestId, path: e.path },
            'unexpected error while resolving',
          );
      }
    },
  };
}

/**
 * Logs unexpected errors: those of a request ({@link unexpectedErrorListener}), and those outside a
 * request's pipeline (its context failed, or Apollo itself), which have hooks of their own.
 */
export function unexpectedErrorLog(
  logger: Logger,
  parseErrorReason?: ParseErrorReason,
): ApolloServerPlugin<GatewayContext> {
  const listener = unexpectedErrorListener(logger, parseErrorReason);
  return {
    requestDidStart: async () => listener,
    async contextCreationDidFail({ error }) {
      const u = unexpectedCause(error, parseErrorReason);
      if (u) logger.error({ err: u.cause }, 'unexpected error while creating the request context');
    },
    async unexpectedErrorProcessingRequest({ requestContext, error }) {
      logger.error(
        { err: error, requestId: requestContext.contextValue?.requestId },
        'unexpected error while processing a request',
      );
    },
  };
}
