/**
 * The gateway's Apollo Server: the limited schema and its options, the error formatter, and the
 * plugins in the order they must run (landing page and cache hints off, inline traces, observability, the
 * unexpected-error log, the HTTP status rule, compiled execution, the limits' own plugin last).
 */
import { ApolloServer } from '@apollo/server';
import {
  ApolloServerPluginCacheControlDisabled,
  ApolloServerPluginLandingPageDisabled,
} from '@apollo/server/plugin/disabled';
import { ApolloServerPluginInlineTrace } from '@apollo/server/plugin/inlineTrace';
import type { GatewayContext } from '../domain/context';
import { createFormatError, unexpectedErrorListener, unexpectedErrorLog } from './errors';
import { documentErrorStatusPlugin } from './http/status-plugin';
import type { OperationLimits } from './limits';
import type { apolloLimitOptions } from './limits/apollo';
import type { Logger } from './logger';
import type { GatewayMetrics } from './metrics';
import { observabilityPlugin, type ObservabilityOptions } from './observability';
import { tracingPlugin } from './tracing/operation';
import { compiledExecution, type ExecutionEngine } from './execution/compiled';
import type { CompiledDocumentsStats } from './execution/compiled-documents';

/** What {@link createApolloServer} builds the server with. */
export interface GatewayApolloOptions {
  /** The operation limits and the Apollo options made of them over the schema (server/limits/apollo.ts). */
  limits: OperationLimits;
  limited: ReturnType<typeof apolloLimitOptions<GatewayContext>>;
  /** How queries and mutations run (server/execution/compiled.ts). @default 'compiled' */
  engine?: ExecutionEngine;
  /** With compiled execution: the budget and the sighting that compiles (server/execution/compiled-documents.ts). @default 64 MiB, 2 */
  compiledDocuments?: { maxBytes?: number; sightings?: number };
  logger: Logger;
  metrics: GatewayMetrics;
  /** Trusted documents: their names label metrics. @default none */
  trustedDocuments?: ObservabilityOptions['trustedDocuments'];
}

/** The server, not yet started. */
export function createApolloServer(o: GatewayApolloOptions): ApolloServer<GatewayContext> {
  const parseErrorReason = o.limits.executionGuards.parseErrorReason;
  const formatError = createFormatError(parseErrorReason);
  const counted = (engine: string, reason?: string): void =>
    o.metrics.executions.inc({ engine, reason: reason ?? 'none' });
  // Trusted documents are compiled at once and always kept: the list bounds them.
  const trusted = o.trustedDocuments;
  const compiled = {
    ...o.compiledDocuments,
    ...(trusted ? { trusted: (hash: string) => trusted.hasHash(hash) } : {}),
    onEvict: () => o.metrics.compiledDocumentsEvicted.inc(),
    observeHeld: (stats: () => CompiledDocumentsStats) => o.metrics.observeCompiledDocuments(stats),
    // Apollo formats and reports the errors of its own execution only: a compiled request's go through the same formatter and error log.
    formatError,
    didEncounterErrors: unexpectedErrorListener(o.logger, parseErrorReason).didEncounterErrors,
  };
  // Compiled execution answers from a plugin (responseForOperation) over the schema Apollo is given.
  const execution =
    (o.engine ?? 'compiled') === 'compiled'
      ? [compiledExecution<GatewayContext>(o.limited.schema, counted, compiled)]
      : [];
  return new ApolloServer<GatewayContext>({
    ...o.limited,
    formatError,
    includeStacktraceInErrorResponses: false,
    // The HTTP edge applies CSRF prevention itself (server/http/csrf.ts): Apollo's refuses every simple GET.
    csrfPrevention: false,
    // The gateway owns shutdown (server/main.ts): Apollo's own signal handlers would race it.
    stopOnTerminationSignals: false,
    plugins: [
      // Apollo's default landing page loads from a CDN; an air-gapped gateway must not.
      ApolloServerPluginLandingPageDisabled(),
      // No @cacheControl hints exist and every answer is the caller's own (the handler sends
      // `no-store`); the default plugin's per-field hook cost a tenth of a list's CPU.
      ApolloServerPluginCacheControlDisabled(),
      // A router that asks (apollo-federation-include-trace: ftv1) gets field timings; error texts
      // stay out of them (they may name backend details), as Apollo's default for subgraphs.
      ApolloServerPluginInlineTrace({ includeErrors: { masked: true } }),
      observabilityPlugin(o.logger, o.metrics, { trustedDocuments: o.trustedDocuments }),
      // Names the operation's span (server/tracing); a no-op without an SDK.
      tracingPlugin<GatewayContext>(),
      unexpectedErrorLog(o.logger, parseErrorReason),
      documentErrorStatusPlugin<GatewayContext>(),
      // A plugin with a didEncounterErrors hook sees a compiled request's errors only if compiledExecution is given it too.
      ...execution,
      // Last: it sees the errors the plugins above added.
      ...o.limited.plugins,
    ],
  });
}
