/**
 * Results the hub makes itself (per-event executions, SUBSCRIBED, error results), formatted by
 * the rule HTTP and graphql-ws use (adapters/contract/graphql-errors.ts): gateway errors keep
 * their code and details, anything unexpected becomes INTERNAL_SERVER_ERROR without details
 * (reported to `onUnexpected` for the log).
 */
import type { ExecutionResult, GraphQLFormattedError } from 'graphql';
import type { GatewayError } from '../../adapters/contract/errors';
import {
  formatGraphQLError,
  internalError,
  toGraphQLError,
  type FormatErrorOptions,
} from '../../adapters/contract/graphql-errors';
import { SerializedResult } from './types';

/** Serializes an execution result once, errors formatted. */
export function serialize(r: ExecutionResult, onUnexpected?: FormatErrorOptions['onUnexpected']): SerializedResult {
  const out: { errors?: GraphQLFormattedError[]; data?: unknown } = {};
  if (r.errors && r.errors.length > 0) out.errors = r.errors.map((e) => formatGraphQLError(e, { onUnexpected }));
  if (r.data !== undefined) out.data = r.data;
  return new SerializedResult(JSON.stringify(out));
}

/** The result of an execution that threw: one INTERNAL_SERVER_ERROR, nothing else. */
export const internalResult = (): SerializedResult =>
  new SerializedResult(JSON.stringify({ errors: [internalError()] }));

/** An error result of one subscriber (a GraphQL error carrying the gateway error's code). */
export function errorResult(err: GatewayError): ExecutionResult {
  return { errors: [toGraphQLError(err)] };
}
