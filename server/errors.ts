/**
 * Turns errors into the GraphQL error format once, at the edge. Gateway errors keep their code
 * and details; anything unexpected becomes INTERNAL_SERVER_ERROR with details logged, not sent.
 */
import { unwrapResolverError } from '@apollo/server/errors';
import type { GraphQLFormattedError } from 'graphql';
import { GatewayError } from '../adapters/errors';
import type { Logger } from './logger';

export function createFormatError(logger: Logger) {
  return (formatted: GraphQLFormattedError, error: unknown): GraphQLFormattedError => {
    const original = unwrapResolverError(error);
    if (original instanceof GatewayError) {
      return { message: original.message, locations: formatted.locations, path: formatted.path, extensions: original.toExtensions() };
    }
    const code = formatted.extensions?.code;
    // Apollo's own codes (parse, validation, variable coercion) are safe to pass on.
    if (typeof code === 'string' && code !== 'INTERNAL_SERVER_ERROR') {
      return { message: formatted.message, locations: formatted.locations, path: formatted.path, extensions: { code } };
    }
    logger.error({ err: original, path: formatted.path }, 'unexpected error while resolving');
    return { message: 'Internal server error', locations: formatted.locations, path: formatted.path, extensions: { code: 'INTERNAL_SERVER_ERROR' } };
  };
}

/** The formatted form of a partial (per-backend) failure, added beside the data. */
export function formatPartial(error: GatewayError, path: ReadonlyArray<string | number>): GraphQLFormattedError {
  return { message: error.message, path, extensions: error.toExtensions() };
}
