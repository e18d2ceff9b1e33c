/**
 * Operation limits, for any transport: `operationLimits(config)` gives the parse options, the
 * validation rules, the schema wrapper and the execution guards. A transport (Apollo over HTTP
 * today, graphql-ws or a compiled executor later) parses with `parseOptions`, validates with
 * `validationRules` beside graphql-js's own, runs `beforeExecute` once the variables are known,
 * executes the wrapped schema with a context holding `createExecutionLimits(...)`, and passes
 * the errors through `finishErrors`. docs/limits.md describes each limit.
 */
import type {
  DocumentNode,
  GraphQLError,
  GraphQLFormattedError,
  GraphQLSchema,
  ParseOptions,
  ValidationRule,
} from 'graphql';
import { ErrorCode, type GatewayError } from '../../adapters/contract/errors';
import { DEFAULT_LIMITS, type LimitsConfig } from './config';
import { checkCost } from './cost';
import { ExecutionLimits } from '../../domain/execution-limits';
import { limitRules } from './rules';
import { parseOptions, tokenLimitError } from './tokens';
import { wrapSchema } from './wrap';

export { DEFAULT_LIMITS, limitsConfig, type LimitsConfig } from './config';
export { PRE_EXECUTION_CODES } from './errors';
export { ExecutionLimits, type LimitedContext } from '../../domain/execution-limits';

/** What a transport needs to apply the limits. */
export interface OperationLimits {
  /** For graphql-js `parse`: the token limit. */
  readonly parseOptions: ParseOptions;
  /** To run beside graphql-js's specifiedRules. */
  readonly validationRules: readonly ValidationRule[];
  /** Wraps every field resolver in place (response-size cap, deadline); returns the schema. */
  wrapSchema(schema: GraphQLSchema): GraphQLSchema;
  readonly executionGuards: {
    /** After validation, with the variables: the cost limit. An error means: do not execute. */
    beforeExecute(a: {
      schema: GraphQLSchema;
      document: DocumentNode;
      operationName?: string | null;
      variableValues?: Record<string, unknown> | null;
    }): GraphQLError | undefined;
    /** The per-execution budget, deadline and meter, for the execution context. Call `end()` after. */
    createExecutionLimits(clientSignal?: AbortSignal): ExecutionLimits;
    /** The typed error behind a parse error, when it is the token limit (a function: transports take it off this object). */
    readonly parseErrorReason: (err: unknown) => GatewayError | undefined;
    /** One error per operation-wide stop (response too large, deadline, cancelled) is enough. */
    finishErrors(errors: readonly GraphQLFormattedError[]): GraphQLFormattedError[];
  };
}

const OPERATION_WIDE = new Set<unknown>([
  ErrorCode.ResponseTooLarge,
  ErrorCode.OperationTimeout,
  ErrorCode.OperationCancelled,
]);

export function operationLimits(config: Partial<LimitsConfig> = {}): OperationLimits {
  const c: LimitsConfig = { ...DEFAULT_LIMITS, ...config };
  return {
    parseOptions: parseOptions(c.maxTokens),
    validationRules: limitRules(c),
    wrapSchema,
    executionGuards: {
      beforeExecute: (a) =>
        checkCost(c.maxCost, {
          schema: a.schema,
          document: a.document,
          operationName: a.operationName,
          variables: a.variableValues,
        }),
      createExecutionLimits: (signal) => new ExecutionLimits(c, signal),
      parseErrorReason: (err) => tokenLimitError(err, c.maxTokens),
      finishErrors: (errors) => {
        const seen = new Set<unknown>();
        return errors.filter((e) => {
          const code = e.extensions?.code;
          if (!OPERATION_WIDE.has(code)) return true;
          if (seen.has(code)) return false;
          seen.add(code);
          return true;
        });
      },
    },
  };
}
