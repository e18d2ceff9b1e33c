/**
 * Apollo Server's side of the operation limits: the constructor options (parse options,
 * validation rules, the wrapped schema) and a thin plugin that runs the execution guards at the
 * points Apollo offers. The limits themselves know nothing of Apollo (index.ts).
 */
import type { ApolloServerPlugin, BaseContext } from '@apollo/server';
import { GraphQLError, type GraphQLSchema, type ParseOptions, type ValidationRule } from 'graphql';
import type { LimitedContext } from '../../domain/execution-limits';
import type { OperationLimits } from './index';

/** Options to spread into `new ApolloServer({...})` in place of `typeDefs`/`resolvers`. */
export function apolloLimitOptions<C extends BaseContext & LimitedContext>(
  limits: OperationLimits,
  schema: GraphQLSchema,
): {
  schema: GraphQLSchema;
  parseOptions: ParseOptions;
  validationRules: ValidationRule[];
  introspection: boolean;
  plugins: Array<ApolloServerPlugin<C>>;
} {
  return {
    schema: limits.wrapSchema(schema),
    parseOptions: limits.parseOptions,
    validationRules: [...limits.validationRules],
    // The limits' own rule decides (INTROSPECTION); Apollo's would refuse with a generic code.
    introspection: true,
    plugins: [limitsPlugin<C>(limits)],
  };
}

function limitsPlugin<C extends BaseContext & LimitedContext>(limits: OperationLimits): ApolloServerPlugin<C> {
  return {
    async requestDidStart() {
      return {
        async didResolveOperation(rc) {
          if (!rc.operation) return;
          const refused = limits.executionGuards.beforeExecute({
            schema: rc.schema,
            document: rc.document,
            operationName: rc.operation.name?.value,
            variableValues: rc.request.variables,
          });
          // A refusal before execution is a request error: 400 (server/http/status-plugin.ts keeps 200 for application/json clients).
          if (refused)
            throw new GraphQLError(refused.message, {
              originalError: refused.originalError,
              extensions: { ...refused.extensions, http: { status: 400 } },
            });
        },
        async willSendResponse(rc) {
          rc.contextValue.limits?.end();
          if (rc.response.body.kind !== 'single') return;
          const result = rc.response.body.singleResult;
          if (result.errors && result.errors.length > 1)
            result.errors = limits.executionGuards.finishErrors(result.errors);
        },
      };
    },
  };
}
