/**
 * Compiled execution: graphql-jit runs the documents Apollo Server has parsed and validated,
 * behind Apollo's executor hook (its gateway interface, here with one static schema), so the
 * request pipeline, plugins, limits and error formatting stay Apollo's. Each document is compiled
 * once; the compiled form is kept beside the parsed document Apollo keeps (a WeakMap keyed by
 * it), so it is bounded by Apollo's own document store.
 *
 * graphql-js runs instead where compiled execution would differ:
 * - the request asks for a federated trace (`apollo-federation-include-trace: ftv1`): the trace
 *   needs Apollo's per-field hooks, which a compiled query does not call;
 * - a variable sits inside an object or list literal (`[{ __typename: "Volume", id: $id }]`):
 *   graphql-jit parses such literals of custom scalars (federation's `_Any`) without the variables;
 * - graphql-jit cannot compile the document (it then stays on graphql-js).
 * Variables are checked by graphql-js first, so a bad variable gets graphql-js's error (which
 * Apollo answers as BAD_USER_INPUT) word for word. Resolvers are the schema's own (with the limits' wrapper: response-size cap, deadline and call
 * budget), so typed errors, partial results and null propagation are those of the resolvers.
 */
import type { ApolloServerOptionsWithGateway, BaseContext } from '@apollo/server';
import { BREAK, execute, getVariableValues, GraphQLError, printSchema, visit, type DocumentNode, type ExecutionResult, type GraphQLSchema } from 'graphql';
import { compileQuery, isCompiledQuery, type CompiledQuery } from 'graphql-jit';
import { installLeanGatewayContext } from './lean-gateway-context';

/** How queries and mutations are executed: `compiled` (graphql-jit) or `graphql-js`. */
export type ExecutionEngine = 'compiled' | 'graphql-js';
export const EXECUTION_ENGINES: readonly ExecutionEngine[] = ['compiled', 'graphql-js'];

/** Why a request ran on graphql-js although compiled execution is on. */
export type InterpretedReason = 'ftv1-trace' | 'nested-variable' | 'not-compiled';

/** Told of every execution: `compiled`, or graphql-js and why (for the `gateway_executions_total` metric). */
export type ExecutionObserver = (engine: ExecutionEngine, reason?: InterpretedReason) => void;

/** A document executed by graphql-js, and why. */
interface NotCompiled {
  reason: Exclude<InterpretedReason, 'ftv1-trace'>;
}
type Compiled = CompiledQuery | NotCompiled;
const isNotCompiled = (c: Compiled): c is NotCompiled => 'reason' in c;

/** Whether a variable is used inside an object or list literal anywhere in `document`. */
function hasNestedVariable(document: DocumentNode): boolean {
  let found = false;
  let depth = 0;
  const enter = (): void => void depth++;
  const leave = (): void => void depth--;
  visit(document, {
    ObjectValue: { enter, leave },
    ListValue: { enter, leave },
    Variable() {
      if (depth > 0) {
        found = true;
        return BREAK;
      }
      return undefined;
    },
    // Variable definitions are not uses.
    VariableDefinition: () => false,
  });
  return found;
}

/**
 * graphql-jit's errors as graphql-js makes them: graphql-jit leaves `extensions` undefined when
 * the original error has none, where Apollo (and the formatter) expect graphql-js's `{}`.
 */
function asGraphQLJsErrors(r: ExecutionResult): ExecutionResult {
  if (!r.errors?.length) return r;
  const errors = r.errors.map((e) => {
    const g = new GraphQLError(e.message, {
      path: e.path,
      originalError: e.originalError ?? undefined,
      extensions: e.extensions,
    });
    // Where in the document: graphql-jit computed it already (graphql-js would from the nodes).
    if (e.locations) (g as { locations?: GraphQLError['locations'] }).locations = e.locations;
    return g;
  });
  return { ...r, errors };
}

/** The gateway interface Apollo Server takes, serving `schema` with compiled execution. */
export function compiledExecution<C extends BaseContext>(schema: GraphQLSchema, observe: ExecutionObserver = () => undefined): ApolloServerOptionsWithGateway<C>['gateway'] {
  // Apollo's own per-request context for executors keeps each request through young-generation GCs.
  installLeanGatewayContext();
  // Per document, per operation name ('' for none).
  const cache = new WeakMap<DocumentNode, Map<string, Compiled>>();
  const compiledFor = (document: DocumentNode, operationName: string | undefined): Compiled => {
    let byName = cache.get(document);
    if (!byName) cache.set(document, (byName = new Map()));
    const key = operationName ?? '';
    let c = byName.get(key);
    if (c === undefined) {
      if (hasNestedVariable(document)) {
        c = { reason: 'nested-variable' };
      } else {
        let q: CompiledQuery | ExecutionResult | undefined;
        try {
          q = compileQuery(schema, document, operationName, {
            disablingCapturingStackErrors: true,
          });
        } catch {
          q = undefined;
        }
        c = q !== undefined && isCompiledQuery(q) ? q : { reason: 'not-compiled' };
      }
      byName.set(key, c);
    }
    return c;
  };
  const interpret = (
    reason: InterpretedReason,
    document: DocumentNode,
    operationName: string | undefined,
    context: unknown,
    variables: Record<string, unknown> | undefined,
  ): Promise<ExecutionResult> | ExecutionResult => {
    observe('graphql-js', reason);
    return execute({
      schema,
      document,
      operationName,
      contextValue: context,
      variableValues: variables,
    });
  };
  return {
    onSchemaLoadOrUpdate(callback) {
      // Only Apollo's schema reporting (off without an Apollo key) reads the SDL: printed if asked, not at every start.
      callback({
        apiSchema: schema,
        get coreSupergraphSdl() {
          return printSchema(schema);
        },
      });
      return () => undefined;
    },
    async load() {
      return {
        async executor(rc) {
          // The name the client asked for (`rc.operationName` is the resolved one, null when none matched).
          const name = rc.request.operationName ?? undefined;
          const vars = rc.request.variables;
          if (rc.request.http?.headers.get('apollo-federation-include-trace') === 'ftv1') return interpret('ftv1-trace', rc.document, name, rc.context, vars);
          // No operation to run (an unknown operationName): graphql-js words the refusal.
          if (!rc.operation) return interpret('not-compiled', rc.document, name, rc.context, vars);
          const c = compiledFor(rc.document, name);
          if (isNotCompiled(c)) return interpret(c.reason, rc.document, name, rc.context, vars);
          if (rc.operation?.variableDefinitions?.length) {
            const checked = getVariableValues(schema, rc.operation.variableDefinitions, vars ?? {}, { maxErrors: 50 });
            if (checked.errors) return { errors: checked.errors };
          }
          observe('compiled');
          return asGraphQLJsErrors(await c.query(undefined, rc.context, vars));
        },
      };
    },
    async stop() {
      // Nothing to release: compiled queries go with their documents.
    },
  };
}
