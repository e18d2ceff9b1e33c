/** The HTTP adapter onto the execution context: credentials from headers, request id from `X-Request-Id`. */
import { GraphQLError } from 'graphql';
import { BadUserInputError } from '../adapters/contract/errors';
import { credentialsFromHeaders, type Headers } from './credentials';
import { createExecutionContext, type GatewayContext, type GatewayServices } from '../domain/context';
import { DEFAULT_LIMITS, ExecutionLimits } from './limits';

/** One HTTP request's facts. */
export interface HttpExecutionRequest {
  headers: Headers;
  /** The `X-Request-Id` header. */
  requestId?: string | null;
  /** Aborted when the client goes away. */
  signal?: AbortSignal;
  /**
   * Makes this execution's limits. Called only once the headers were accepted: limits hold a
   * deadline timer that only a started execution ends. @default the default limits, with `signal`
   */
  createLimits?: () => ExecutionLimits;
}

export function createHttpContext(services: GatewayServices, r: HttpExecutionRequest): GatewayContext {
  let credentials;
  try {
    credentials = credentialsFromHeaders(r.headers, services.registry);
  } catch (err) {
    // Apollo passes on only a GraphQLError from context creation (anything else becomes a 500
    // "Context creation failed"): a bad header is a request error, HTTP 400.
    if (err instanceof BadUserInputError)
      throw new GraphQLError(err.message, {
        originalError: err,
        extensions: { code: err.code, http: { status: 400 } },
      });
    throw err;
  }
  return createExecutionContext(services, {
    credentials,
    requestId: r.requestId,
    limits: r.createLimits?.() ?? new ExecutionLimits(DEFAULT_LIMITS, r.signal),
  });
}
