/**
 * OTLP metrics next to Prometheus (issue 31, docs/tracing.md "Metrics over OTLP"): with
 * `OTEL_METRICS_EXPORTER=otlp` the registry `/metrics` serves is also pushed over OTLP. Off, the
 * SDK is never loaded (`require` below, as tracing's).
 */
import type { Registry } from 'prom-client';
import type { Logger } from '../logger';
import { DEFAULT_SERVICE_NAME } from '../tracing/settings';
import { readMetricsExportSettings } from './settings';

/** The export while it runs. */
export interface MetricsExport {
  /** Exports once more and stops (graceful shutdown). Never rejects. */
  shutdown(): Promise<void>;
}

/**
 * Starts the export when the environment asks for it.
 * @returns undefined when off (nothing was loaded)
 * @throws ConfigError for an exporter, protocol or interval the gateway cannot use
 */
export function startMetricsExport(
  env: NodeJS.ProcessEnv,
  registry: Registry,
  logger: Logger,
  serviceVersion: string,
): MetricsExport | undefined {
  const settings = readMetricsExportSettings(env);
  if (!settings) return undefined;
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- the lazy load
  const { registerMetricsSdk } = require('./sdk') as typeof import('./sdk');
  const sdk = registerMetricsSdk(registry, { ...settings, serviceName: DEFAULT_SERVICE_NAME, serviceVersion });
  logger.info({ intervalMs: settings.intervalMs }, 'OTLP metrics export on');
  return {
    shutdown: () => sdk.shutdown().catch((err: unknown) => logger.warn({ err }, 'the last OTLP metrics export failed')),
  };
}
