/**
 * Results the hub makes itself (per-event executions, SUBSCRIBED, error results) formatted as the
 * HTTP edge formats them: gateway errors keep their code and details, anything unexpected becomes
 * INTERNAL_SERVER_ERROR without details (reported to `onUnexpected` for the log).
 */
import { GraphQLError, type ExecutionResult, type GraphQLFormattedError } from 'graphql';
import { GatewayError } from '../../adapters/contract/errors';
import { SerializedResult } from './types';

function gatewayErrorOf(e: unknown): GatewayError | undefined {
  for (let i = 0; i < 4 && e instanceof Error; i++) {
    if (e instanceof GatewayError) return e;
    e = (e as { originalError?: unknown }).originalError;
  }
  return undefined;
}

/** One error in the wire format. */
export function formatError(e: GraphQLError, onUnexpected?: (err: unknown) => void): GraphQLFormattedError {
  const g = gatewayErrorOf(e);
  const where = { ...(e.locations ? { locations: e.locations } : {}), ...(e.path ? { path: e.path } : {}) };
  if (g) return { message: g.message, ...where, extensions: g.toExtensions() };
  if (e.originalError === undefined || e.originalError === null) return { message: e.message, ...where, extensions: { code: typeof e.extensions.code === 'string' ? e.extensions.code : 'BAD_USER_INPUT' } };
  onUnexpected?.(e.originalError);
  return { message: 'Internal server error', ...where, extensions: { code: 'INTERNAL_SERVER_ERROR' } };
}

/** Serializes an execution result once, errors formatted. */
export function serialize(r: ExecutionResult, onUnexpected?: (err: unknown) => void): SerializedResult {
  const out: { errors?: GraphQLFormattedError[]; data?: unknown } = {};
  if (r.errors && r.errors.length > 0) out.errors = r.errors.map((e) => formatError(e, onUnexpected));
  if (r.data !== undefined) out.data = r.data;
  return new SerializedResult(JSON.stringify(out));
}

/** An error result of one subscriber (a GraphQL error carrying the gateway error's code). */
export function errorResult(err: GatewayError): ExecutionResult {
  return { errors: [new GraphQLError(err.message, { originalError: err, extensions: err.toExtensions() })] };
}
