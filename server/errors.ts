/**
 * Turns errors into the GraphQL error format once, at the edge. Gateway errors keep their code
 * and details; anything unexpected becomes INTERNAL_SERVER_ERROR with details logged, not sent.
 */
import { unwrapResolverError } from '@apollo/server/errors';
import { GraphQLError, type GraphQLFormattedError } from 'graphql';
import { GatewayError } from '../adapters/contract/errors';
import type { Logger } from './logger';

/**
 * The gateway error behind `error`: a resolver's, or one a validation rule or guard put in a
 * GraphQLError's `originalError` (Apollo stamps its own code on those; ours wins).
 */
function gatewayErrorOf(error: unknown): GatewayError | undefined {
  let e: unknown = unwrapResolverError(error);
  for (let i = 0; i < 3 && e instanceof Error; i++) {
    if (e instanceof GatewayError) return e;
    e = (e as { originalError?: unknown }).originalError;
  }
  return undefined;
}

/**
 * @param parseErrorReason the typed reason behind a parse error, when there is one (the token
 *   limit: graphql-js reports it as a plain syntax error).
 */
export function createFormatError(logger: Logger, parseErrorReason?: (err: unknown) => GatewayError | undefined) {
  return (formatted: GraphQLFormattedError, error: unknown): GraphQLFormattedError => {
    const code = formatted.extensions?.code;
    const original = gatewayErrorOf(error) ?? (code === 'GRAPHQL_PARSE_FAILED' ? parseErrorReason?.((error as { originalError?: unknown }).originalError) : undefined);
    if (original) {
      return { message: original.message, locations: formatted.locations, path: formatted.path, extensions: original.toExtensions() };
    }
    // Apollo's own codes (parse, validation, variable coercion) are safe to pass on.
    if (typeof code === 'string' && code !== 'INTERNAL_SERVER_ERROR') {
      return { message: formatted.message, locations: formatted.locations, path: formatted.path, extensions: { code } };
    }
    // graphql-js's own word about the request, raised outside any resolver and wrapping no
    // thrown error (e.g. "Too many errors processing variables" after 50 coercion errors): the
    // request is at fault, not the gateway.
    if (error instanceof GraphQLError && error.originalError === undefined && error.path === undefined) {
      return { message: formatted.message, locations: formatted.locations, extensions: { code: 'BAD_USER_INPUT' } };
    }
    logger.error({ err: unwrapResolverError(error), path: formatted.path }, 'unexpected error while resolving');
    return { message: 'Internal server error', locations: formatted.locations, path: formatted.path, extensions: { code: 'INTERNAL_SERVER_ERROR' } };
  };
}

