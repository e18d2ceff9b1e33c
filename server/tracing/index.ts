/**
 * OpenTelemetry tracing (issue 19, docs/tracing.md): off unless the standard `OTEL_*` variables
 * turn it on, and then the SDK is loaded here, once, before the gateway serves. Off, the SDK is
 * never loaded (`require` below, not `import`): the spans the gateway makes through
 * `@opentelemetry/api` are the API's no-ops and no header is added to backend calls.
 */
import type { Logger } from '../logger';
import { readTracingSettings } from './settings';

export { readTracingSettings, DEFAULT_SERVICE_NAME, OTEL_VARIABLES, type TracingSettings } from './settings';
export { extractTraceContext, inOperationSpan, tracingPlugin, wsOperationSpan } from './operation';

/** Tracing while it runs. */
export interface Tracing {
  /** Exports the spans not yet sent and stops the exporters (graceful shutdown). Never rejects. */
  shutdown(): Promise<void>;
}

/**
 * Starts tracing when the environment asks for it.
 * @returns undefined when tracing is off (nothing was loaded)
 * @throws ConfigError for an exporter or protocol the gateway cannot use
 */
export function startTracing(env: NodeJS.ProcessEnv, logger: Logger, serviceVersion: string): Tracing | undefined {
  const settings = readTracingSettings(env);
  if (!settings) return undefined;
  // Loaded only when on: a gateway without the variables never loads the SDK.
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- that lazy load
  const { registerSdk } = require('./sdk') as typeof import('./sdk');
  const sdk = registerSdk({
    exporters: settings.exporters,
    protocol: settings.protocol,
    propagators: settings.propagators,
    sampler: settings.sampler,
    backgroundRatio: settings.backgroundRatio,
    serviceName: settings.serviceName,
    serviceVersion,
  });
  if (settings.ignoredPropagators.length > 0)
    logger.warn(
      { propagators: settings.ignoredPropagators },
      'OTEL_PROPAGATORS names propagators the gateway does not have: ignored (it has tracecontext, baggage and none)',
    );
  logger.info(
    {
      exporters: settings.exporters,
      protocol: settings.protocol,
      propagators: settings.propagators,
      sampler: settings.sampler.name,
      backgroundRatio: settings.backgroundRatio,
      serviceName: settings.serviceName,
    },
    'tracing on',
  );
  return {
    shutdown: () => sdk.shutdown().catch((err: unknown) => logger.warn({ err }, 'flushing spans at shutdown failed')),
  };
}
