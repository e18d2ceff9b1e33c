/**
 * Whether the gateway pushes its metrics over OTLP, from OpenTelemetry's standard variables
 * (docs/tracing.md, "Metrics over OTLP"). As with tracing, these are OpenTelemetry's settings, not
 * the gateway's: not in the config definition, never refused as unknown (server/config-names.ts).
 */
import { ConfigError } from '../../adapters/contract/settings';

/**
 * The variables the metrics export honours, read here or by the exporter itself (`--help`,
 * docs/tracing.md); `OTEL_SERVICE_NAME` and `OTEL_RESOURCE_ATTRIBUTES` too, as for traces.
 */
export const OTEL_METRICS_VARIABLES: readonly string[] = [
  'OTEL_METRICS_EXPORTER',
  'OTEL_EXPORTER_OTLP_METRICS_ENDPOINT',
  'OTEL_EXPORTER_OTLP_ENDPOINT',
  'OTEL_EXPORTER_OTLP_METRICS_HEADERS',
  'OTEL_EXPORTER_OTLP_METRICS_TIMEOUT',
  'OTEL_EXPORTER_OTLP_METRICS_PROTOCOL',
  'OTEL_METRIC_EXPORT_INTERVAL',
  'OTEL_METRIC_EXPORT_TIMEOUT',
];

/** How the metrics are pushed, once on. */
export interface MetricsExportSettings {
  /** `OTEL_METRIC_EXPORT_INTERVAL`: time from one export to the next, ms. @default 60000 */
  intervalMs: number;
  /** `OTEL_METRIC_EXPORT_TIMEOUT`, at most the interval: how long one export may take, ms. @default 30000 */
  timeoutMs: number;
}

const EXPORTERS: ReadonlySet<string> = new Set(['otlp', 'prometheus', 'none']);

const set = (v: string | undefined): v is string => v !== undefined && v.trim() !== '';

/** A whole number of milliseconds, 1 or more; `fallback` when unset. */
function millis(env: NodeJS.ProcessEnv, variable: string, fallback: number): number {
  const v = env[variable];
  if (!set(v)) return fallback;
  const n = Number(v.trim());
  if (!Number.isInteger(n) || n < 1)
    throw new ConfigError(variable, `must be a whole number of milliseconds, 1 or more, not ${JSON.stringify(v)}`);
  return n;
}

/**
 * The export settings, or null when off: `OTEL_METRICS_EXPORTER` does not name `otlp` (unset,
 * `prometheus`: `/metrics` is always served, or `none`), or `OTEL_SDK_DISABLED=true`.
 * @throws ConfigError for an exporter the gateway cannot use, a protocol other than http/json, or a bad interval
 */
export function readMetricsExportSettings(env: NodeJS.ProcessEnv): MetricsExportSettings | null {
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === 'true' || !set(env.OTEL_METRICS_EXPORTER)) return null;
  const names = env.OTEL_METRICS_EXPORTER.split(',')
    .map((s) => s.trim().toLowerCase())
    .filter((s) => s !== '');
  const unknown = names.filter((n) => !EXPORTERS.has(n));
  if (unknown.length > 0)
    throw new ConfigError(
      'OTEL_METRICS_EXPORTER',
      `unknown exporter ${unknown.map((n) => JSON.stringify(n)).join(', ')}: use otlp, prometheus (GET /metrics, always served) or none`,
    );
  if (!names.includes('otlp') || names.includes('none')) return null;
  // The pinned exporter (@opentelemetry/exporter-metrics-otlp-http) sends JSON; the traces' OTEL_EXPORTER_OTLP_PROTOCOL does not apply.
  const protocol = env.OTEL_EXPORTER_OTLP_METRICS_PROTOCOL?.trim().toLowerCase();
  if (set(protocol) && protocol !== 'http/json')
    throw new ConfigError(
      'OTEL_EXPORTER_OTLP_METRICS_PROTOCOL',
      `metrics are sent as http/json only, not ${JSON.stringify(protocol)}`,
    );
  const intervalMs = millis(env, 'OTEL_METRIC_EXPORT_INTERVAL', 60_000);
  // The SDK's reader refuses a timeout above the interval.
  return { intervalMs, timeoutMs: Math.min(intervalMs, millis(env, 'OTEL_METRIC_EXPORT_TIMEOUT', 30_000)) };
}
