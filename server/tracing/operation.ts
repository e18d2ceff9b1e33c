/**
 * The SERVER span of one GraphQL operation, over HTTP or graphql-ws: its parent is the caller's
 * W3C `traceparent`/`tracestate` (HTTP request headers, or the WebSocket upgrade's), it is the
 * active span while the operation runs (so every backend call's CLIENT span is its child), and it
 * is named by the operation's type and name. Variables, documents and headers are never recorded.
 * Without an SDK every call here is the API's no-op.
 */
import type { IncomingHttpHeaders } from 'node:http';
import {
  context,
  propagation,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
  type Context,
  type Span,
} from '@opentelemetry/api';
import type { ApolloServerPlugin } from '@apollo/server';
import { getOperationAST, type ExecutionArgs } from 'graphql';
import { errorCodeOf } from '../../adapters/contract/graphql-errors';
import { tracer } from '../../adapters/http/tracing';
import { operationName } from '../operation-labels';

/** The transport an operation came over (`gateway.transport`). */
export type OperationTransport = 'http' | 'graphql-ws';

/** The caller's trace context from request headers (`traceparent`, `tracestate`); the root context when none. */
export function extractTraceContext(headers: IncomingHttpHeaders): Context {
  return propagation.extract(ROOT_CONTEXT, headers);
}

/** Names the span for its operation (semantic conventions: `{type} {name}`). */
function nameOperation(span: Span, type: string | undefined, name: string | null | undefined): void {
  if (!type) return;
  const shown = name ? operationName(name) : undefined;
  span.updateName(shown ? `${type} ${shown}` : type);
  span.setAttribute('graphql.operation.type', type);
  if (shown) span.setAttribute('graphql.operation.name', shown);
}

/**
 * Runs `run` as one operation: a SERVER span, child of `parent`, active for the run.
 * @param parent the caller's context ({@link extractTraceContext})
 */
export async function inOperationSpan<T>(
  parent: Context,
  transport: OperationTransport,
  run: () => Promise<T>,
  operation?: { type?: string; name?: string | null },
): Promise<T> {
  const span = tracer.startSpan(
    'GraphQL Operation',
    { kind: SpanKind.SERVER, attributes: { 'gateway.transport': transport } },
    parent,
  );
  if (operation) nameOperation(span, operation.type, operation.name);
  try {
    return await context.with(trace.setSpan(parent, span), run);
  } catch (err) {
    span.setStatus({ code: SpanStatusCode.ERROR });
    throw err;
  } finally {
    span.end();
  }
}

/** A graphql-ws operation's span: its type and name come from the document. */
export function wsOperationSpan<T>(
  parent: Context | undefined,
  args: Pick<ExecutionArgs, 'document' | 'operationName'>,
  run: () => Promise<T>,
): Promise<T> {
  const op = getOperationAST(args.document, args.operationName);
  return inOperationSpan(parent ?? ROOT_CONTEXT, 'graphql-ws', run, {
    type: op?.operation,
    name: op?.name?.value ?? args.operationName,
  });
}

/** A phase of an HTTP operation: Apollo's parsing, validation and execution (its own or compiled). */
export type OperationPhase = 'parse' | 'validate' | 'execute';

/**
 * Starts the INTERNAL span of one phase, a child of `parent` (the operation's context). It is not
 * made active: the backend calls stay children of the operation's span whichever engine executes
 * (Apollo's hooks cannot make a span active around its own execution).
 * @returns its end: failed when given an error
 */
function startPhase(name: OperationPhase, parent: Context): (err?: unknown) => void {
  const span = tracer.startSpan(name, { kind: SpanKind.INTERNAL }, parent);
  return (err) => {
    if (err) span.setStatus({ code: SpanStatusCode.ERROR });
    span.end();
  };
}

/**
 * Runs the execution of a compiled document (server/execution/compiled.ts), which Apollo's
 * `executionDidStart` hook does not see, in an `execute` span under the operation's; without a
 * recording operation span, just runs it.
 */
export function inExecuteSpan<T>(run: () => T | Promise<T>): T | Promise<T> {
  if (!trace.getActiveSpan()?.isRecording()) return run();
  const end = startPhase('execute', context.active());
  let result: T | Promise<T>;
  try {
    result = run();
  } catch (err) {
    end(err);
    throw err;
  }
  if (!(result instanceof Promise)) return (end(), result);
  return result.then(
    (r) => (end(), r),
    (err: unknown) => {
      end(err);
      throw err;
    },
  );
}

/**
 * Names the HTTP operation's span once Apollo resolved the operation, adds a span for each phase
 * Apollo runs (a document in its store is not parsed or validated again), and marks the operation
 * failed when the answer carries errors (their codes only: messages may name backend details).
 */
export function tracingPlugin<C extends object>(): ApolloServerPlugin<C> {
  return {
    async requestDidStart() {
      const span = trace.getActiveSpan();
      if (!span?.isRecording()) return;
      const operation = context.active();
      return {
        async parsingDidStart() {
          const end = startPhase('parse', operation);
          return async (err) => end(err);
        },
        async validationDidStart() {
          const end = startPhase('validate', operation);
          return async (errs) => end(errs?.[0]);
        },
        async executionDidStart() {
          const end = startPhase('execute', operation);
          return { executionDidEnd: async (err) => end(err) };
        },
        async didResolveOperation(rc) {
          nameOperation(span, rc.operation?.operation, rc.operationName ?? rc.operation?.name?.value);
        },
        async willSendResponse(rc) {
          const body = rc.response.body.kind === 'single' ? rc.response.body.singleResult : undefined;
          const codes = [...new Set((body?.errors ?? []).map(errorCodeOf))];
          if (codes.length === 0) return;
          span.setAttribute('gateway.error.codes', codes);
          span.setStatus({ code: SpanStatusCode.ERROR });
        },
      };
    },
  };
}
