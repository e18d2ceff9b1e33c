/**
 * Compiled execution: graphql-jit runs the documents Apollo Server has parsed and validated. It is
 * an Apollo plugin that answers from the public `responseForOperation` hook: Apollo has parsed,
 * validated and resolved the operation and run every plugin's hooks up to there; the plugin runs
 * the compiled query and hands Apollo the response, formatted as Apollo formats its own
 * (./apollo-response.ts), and Apollo sends it after the `willSendResponse` hooks. Apollo's own
 * execution (graphql-js over the same schema) runs when the plugin answers null. Apollo's gateway
 * interface, which this used before, builds a per-request context whose accessors kept every
 * request alive through young-generation GCs (docs/architecture.md, "Allocation on the hot path").
 *
 * A document is compiled at its second sighting (`COMPILED_DOCUMENTS_SIGHTINGS`) and kept within a
 * byte budget of its own (`COMPILED_DOCUMENTS_MAX_BYTES`; server/execution/compiled-documents.ts):
 * Apollo's document store counts the parsed document, a small part of what a compiled one holds.
 * Trusted documents are compiled at once and always kept.
 *
 * Apollo's own execution (graphql-js) runs instead where compiled execution would differ:
 * - the request asks for a federated trace (`apollo-federation-include-trace: ftv1`): the trace
 *   needs Apollo's per-field hooks, which it calls only in its own execution;
 * - a variable sits inside an object or list literal (`[{ __typename: "Volume", id: $id }]`):
 *   graphql-jit parses such literals of custom scalars (federation's `_Any`) without the variables;
 * - graphql-jit cannot compile the document (it then stays on graphql-js);
 * - the document has not been seen often enough yet (`first-sighting`), or its compiled form
 *   would take more than an eighth of the budget (`too-large`);
 * - no operation matches (an unknown operationName), or the variables do not coerce: graphql-js
 *   words the refusal, and Apollo answers a bad variable as BAD_USER_INPUT, word for word.
 * Resolvers are the schema's own (with the limits' wrapper: response-size cap, deadline and call
 * budget), so typed errors, partial results and null propagation are those of the resolvers.
 * Plugins' `executionDidStart` and `willResolveField` hooks run only in Apollo's own execution (the
 * tracing's `execute` span is made here instead);
 * `didEncounterErrors` is called with the errors of a compiled request through the option of the
 * same name (Apollo calls no plugin's for a response a plugin gives).
 */
import type {
  ApolloServerPlugin,
  BaseContext,
  GraphQLRequestContextResponseForOperation,
  GraphQLRequestListener,
} from '@apollo/server';
import {
  BREAK,
  getVariableValues,
  GraphQLError,
  visit,
  type DocumentNode,
  type ExecutionResult,
  type GraphQLSchema,
} from 'graphql';
import { compileQuery, isCompiledQuery, type CompiledQuery, type CompilerOptions } from 'graphql-jit';
import { setFlagsFromString } from 'node:v8';
import {
  CompiledDocuments,
  NOT_YET,
  type CompiledDocumentsOptions,
  type CompiledDocumentsStats,
  type CompiledEntry,
} from './compiled-documents';
import { apolloResponse, type ApolloResponseOptions } from './apollo-response';
import { inExecuteSpan } from '../tracing/operation';

/** How queries and mutations are executed: `compiled` (graphql-jit) or `graphql-js`. */
export type ExecutionEngine = 'compiled' | 'graphql-js';
export const EXECUTION_ENGINES: readonly ExecutionEngine[] = ['compiled', 'graphql-js'];

/** Why a request ran on graphql-js although compiled execution is on. */
export type InterpretedReason = 'ftv1-trace' | 'nested-variable' | 'not-compiled' | 'first-sighting' | 'too-large';

/** Told of every execution: `compiled`, or graphql-js and why (for the `gateway_executions_total` metric). */
export type ExecutionObserver = (engine: ExecutionEngine, reason?: InterpretedReason) => void;

/** A document executed by graphql-js, and why. */
interface NotCompiled {
  reason: Exclude<InterpretedReason, 'ftv1-trace' | 'first-sighting'>;
}
type Compiled = CompiledQuery | NotCompiled;
const isNotCompiled = (c: Compiled): c is NotCompiled => 'reason' in c;

/** What a document that runs on graphql-js is charged in the budget: its marker and its key. */
const MARKER_BYTES = 256;

/**
 * graphql-jit keeps the generated source under this name when its `debug` option (untyped) is on;
 * its length is read for the estimate, then the property is dropped (V8 keeps its own copy).
 */
const GENERATED_SOURCE = '__DO_NOT_USE_THIS_OR_YOU_WILL_BE_FIRED_compilation';

/**
 * Estimated bytes a compiled document holds, measured on Node 20 with V8's compilation cache off
 * (bench/compiled-size.ts): its code (about 3.3 bytes per character of generated source: the
 * source V8 keeps, the bytecode, the resolve information per field) and the parsed document it
 * keeps alive (about 4 bytes per character of its JSON, plus its text), plus 8 KiB. Over 60
 * documents the estimate was 1.07–1.25 times the heap held by those over 100 KiB, up to 2 for
 * small ones and up to 4 for documents made of long literals; never below. Without the generated
 * source (a graphql-jit that no longer offers it) the code is charged 200 bytes per character of
 * the document's JSON, above the largest ratio measured (about 165: one fragment spread on 15
 * aliases).
 */
export function estimatedBytes(generatedChars: number | undefined, document: DocumentNode, text: string): number {
  const json = JSON.stringify(document).length;
  return 8192 + Math.ceil(generatedChars !== undefined ? 3.5 * generatedChars : 200 * json) + 4 * json + text.length;
}

/** The operation compiled, with its estimated size; a marker when it cannot run compiled. */
function compileFor(
  schema: GraphQLSchema,
  document: DocumentNode,
  operationName: string | undefined,
  text: string,
): CompiledEntry<Compiled> {
  if (hasNestedVariable(document)) return { value: { reason: 'nested-variable' }, bytes: MARKER_BYTES };
  let q: (CompiledQuery | ExecutionResult) & { [GENERATED_SOURCE]?: string };
  try {
    q = compileQuery(schema, document, operationName, {
      disablingCapturingStackErrors: true,
      debug: true,
    } as Partial<CompilerOptions>);
  } catch {
    return { value: { reason: 'not-compiled' }, bytes: MARKER_BYTES };
  }
  if (!isCompiledQuery(q)) return { value: { reason: 'not-compiled' }, bytes: MARKER_BYTES };
  const generated = q[GENERATED_SOURCE];
  delete q[GENERATED_SOURCE];
  return {
    value: q,
    bytes: estimatedBytes(typeof generated === 'string' ? generated.length : undefined, document, text),
  };
}

/**
 * Turns V8's compilation cache off for the whole process, so that a compiled document dropped
 * from the budget leaves the heap. graphql-jit builds each document's code with `new Function`,
 * and V8 keeps every such function's code in its cache, keyed by the source, beyond any reference
 * the gateway holds; in a flood the cache did not age out. Measured (a child gateway, 2,000
 * unique documents of five lists, each sent twice): 1.9 GB of heap after a forced GC with the
 * cache, 212 MiB without. The cache only helps to compile the same source again: graphql-jit's
 * compile went from 1.0 to 1.2 ms per document, and a document holds about 15 % more (the
 * per-field resolve-information functions, equal in source, are no longer shared; the estimate
 * counts it). The CLI calls it (server/main.ts) when compiled execution is on; a library caller
 * keeping documents compiled should too.
 */
export function turnOffV8CompilationCache(): void {
  setFlagsFromString('--no-compilation-cache');
}

/**
 * How compiled execution keeps documents (server/execution/compiled-documents.ts), and how it
 * formats and reports errors (the server's `formatError` and the `didEncounterErrors` of the
 * plugins that must see a compiled request's errors: ./apollo-response.ts).
 */
export type CompiledExecutionOptions<C extends BaseContext = BaseContext> = Omit<
  CompiledDocumentsOptions<Compiled, unknown>,
  'oversized' | 'compile'
> &
  ApolloResponseOptions<C> & {
    /** Told, once, how to read what is held (for the metrics' gauges at scrape time). */
    observeHeld?: (stats: () => CompiledDocumentsStats) => void;
  };

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

/**
 * The Apollo plugin that serves `schema` (the one Apollo Server is given) with compiled execution.
 * Its one request listener is shared by every request: it keeps nothing per request.
 */
export function compiledExecution<C extends BaseContext>(
  schema: GraphQLSchema,
  observe: ExecutionObserver = () => undefined,
  options: CompiledExecutionOptions<C> = {},
): ApolloServerPlugin<C> {
  const documents = new CompiledDocuments<Compiled, { document: DocumentNode; source: string }>({
    ...options,
    compile: (rc, name) => compileFor(schema, rc.document, name, rc.source),
    oversized: { reason: 'too-large' },
  });
  options.observeHeld?.(() => documents.stats());
  /** Apollo's own execution runs the request: null, counted with its reason. */
  const interpreted = (reason: InterpretedReason): null => {
    observe('graphql-js', reason);
    return null;
  };
  /** The compiled query's result, or null where Apollo's own execution must run (see the module's comment). */
  const run = (rc: GraphQLRequestContextResponseForOperation<C>): Promise<ExecutionResult> | ExecutionResult | null => {
    if (rc.request.http?.headers.get('apollo-federation-include-trace') === 'ftv1') return interpreted('ftv1-trace');
    // The operation Apollo resolved is absent when none matched the name asked for: graphql-js words the refusal.
    if (!rc.operation || rc.queryHash === undefined) return interpreted('not-compiled');
    // The name the client asked for (`rc.operationName` is the resolved one, null when anonymous).
    const c = documents.get(rc.queryHash, rc.request.operationName ?? undefined, rc);
    if (c === NOT_YET) return interpreted('first-sighting');
    if (isNotCompiled(c)) return interpreted(c.reason);
    const vars = rc.request.variables;
    // Variables that do not coerce: Apollo's execution refuses them (BAD_USER_INPUT, 400), uncounted as before.
    if (
      rc.operation.variableDefinitions?.length &&
      getVariableValues(schema, rc.operation.variableDefinitions, vars ?? {}, { maxErrors: 50 }).errors
    )
      return null;
    observe('compiled');
    // Apollo's executionDidStart hook runs only for its own execution: the span is made here.
    return inExecuteSpan(() => c.query(undefined, rc.contextValue, vars));
  };
  const listener: GraphQLRequestListener<C> = {
    async responseForOperation(rc) {
      const result = run(rc);
      return result === null ? null : apolloResponse(rc, asGraphQLJsErrors(await result), options);
    },
  };
  return { requestDidStart: async () => listener };
}
