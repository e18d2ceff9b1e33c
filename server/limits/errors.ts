/**
 * Typed errors of the operation limits. Validation rules and guards wrap them in a GraphQLError
 * as its `originalError`, so formatError (server/errors.ts) sends their code whatever code the
 * server framework stamps on validation errors.
 */
import { GraphQLError, type ASTNode } from 'graphql';
import { ErrorCode, GatewayError } from '../../adapters/contract/errors';
import type { LimitsConfig } from './config';

/** An operation refused before execution: it is over `limit` (a `limits` setting name). */
export class OperationLimitError extends GatewayError {
  constructor(
    code: ErrorCode,
    message: string,
    /** The setting, e.g. `maxDepth` (or `introspectionTypeLists`, a fixed bound). */
    readonly limit: keyof LimitsConfig | 'introspectionTypeLists',
    readonly max: number,
    /** What the operation has, when known. */
    readonly found?: number,
  ) {
    super(code, message);
  }

  override toExtensions(): Record<string, unknown> {
    return {
      ...super.toExtensions(),
      limit: this.limit,
      max: this.max,
      ...(this.found === undefined ? {} : { found: this.found }),
    };
  }
}

/** A GraphQLError whose original is `err`, for validation rules and pre-execution guards. */
export function limitGraphQLError(err: GatewayError, nodes?: ASTNode | readonly ASTNode[]): GraphQLError {
  return new GraphQLError(err.message, { nodes, originalError: err, extensions: { code: err.code } });
}

/** Codes of the refusals before execution: document errors for the HTTP status rules. */
export const PRE_EXECUTION_CODES: ReadonlySet<string> = new Set([
  ErrorCode.MaxDepthLimit,
  ErrorCode.MaxAliasesLimit,
  ErrorCode.MaxDirectivesLimit,
  ErrorCode.MaxTokensLimit,
  ErrorCode.MaxIntrospectionLimit,
  ErrorCode.IntrospectionDisabled,
  ErrorCode.CostEstimatedTooExpensive,
]);
