/**
 * The OpenTelemetry metrics SDK pushing the prom-client registry over OTLP/HTTP (JSON) every
 * interval. The only module that imports `@opentelemetry/sdk-metrics` and the metric exporter:
 * ./index.ts requires it only when `OTEL_METRICS_EXPORTER` names `otlp`. The meter provider has no
 * instruments of its own: everything it exports comes from the registry (./prom-bridge.ts). The
 * exporter reads its own variables: `OTEL_EXPORTER_OTLP[_METRICS]_{ENDPOINT,HEADERS,TIMEOUT}`.
 */
import { OTLPMetricExporter } from '@opentelemetry/exporter-metrics-otlp-http';
import { MeterProvider, PeriodicExportingMetricReader } from '@opentelemetry/sdk-metrics';
import type { Registry } from 'prom-client';
import { gatewayResource } from '../otel-resource';
import { promClientProducer } from './prom-bridge';
import type { MetricsExportSettings } from './settings';

/** What `startMetricsExport` needs of the SDK: the last export and stop at shutdown. */
export interface MetricsSdk {
  shutdown(): Promise<void>;
}

export function registerMetricsSdk(
  registry: Registry,
  o: MetricsExportSettings & { serviceName: string; serviceVersion: string },
): MetricsSdk {
  const resource = gatewayResource(o.serviceName, o.serviceVersion);
  const reader = new PeriodicExportingMetricReader({
    exporter: new OTLPMetricExporter(),
    exportIntervalMillis: o.intervalMs,
    exportTimeoutMillis: o.timeoutMs,
    metricProducers: [promClientProducer(registry, resource, performance.timeOrigin)],
  });
  // Not registered globally: nothing in the gateway records through the metrics API.
  const provider = new MeterProvider({ resource, readers: [reader] });
  // The provider's shutdown exports once more, then stops the reader and the exporter.
  return { shutdown: () => provider.shutdown() };
}
