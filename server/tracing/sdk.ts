/**
 * The OpenTelemetry SDK, set up from the standard `OTEL_*` variables (docs/tracing.md). The only
 * module that imports `@opentelemetry/sdk-*` and the exporter: `server/tracing/index.ts` requires
 * it only when tracing is on, so a gateway without the variables never loads them.
 *
 * What the SDK reads itself: `OTEL_TRACES_SAMPLER` / `OTEL_TRACES_SAMPLER_ARG` (default
 * `parentbased_always_on`), `OTEL_BSP_*` (batching), `OTEL_SPAN_*_LIMIT`, and the exporter's
 * `OTEL_EXPORTER_OTLP[_TRACES]_{ENDPOINT,HEADERS,TIMEOUT}`; `OTEL_SERVICE_NAME` and
 * `OTEL_RESOURCE_ATTRIBUTES` through the resource's env detector.
 */
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { defaultResource, detectResources, envDetector, resourceFromAttributes } from '@opentelemetry/resources';
import { BatchSpanProcessor, ConsoleSpanExporter, NodeTracerProvider, SimpleSpanProcessor, type SpanProcessor } from '@opentelemetry/sdk-trace-node';
import { ATTR_SERVICE_NAME, ATTR_SERVICE_VERSION } from '@opentelemetry/semantic-conventions';
import type { TraceExporterName } from './settings';

/** What `startTracing` needs of the SDK: a flush-and-stop for the graceful shutdown. */
export interface TracingSdk {
  /** Exports the spans still batched, then stops the exporters. */
  shutdown(): Promise<void>;
}

/** Registers a tracer provider, the W3C trace-context propagator and the async context manager globally. */
export function registerSdk(o: { exporters: readonly TraceExporterName[]; serviceName: string; serviceVersion: string }): TracingSdk {
  const processors: SpanProcessor[] = o.exporters.map((e) => (e === 'console' ? new SimpleSpanProcessor(new ConsoleSpanExporter()) : new BatchSpanProcessor(new OTLPTraceExporter())));
  const resource = defaultResource()
    .merge(resourceFromAttributes({ [ATTR_SERVICE_NAME]: o.serviceName, [ATTR_SERVICE_VERSION]: o.serviceVersion }))
    // OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES win.
    .merge(detectResources({ detectors: [envDetector] }));
  const provider = new NodeTracerProvider({ resource, spanProcessors: processors });
  provider.register({ propagator: new W3CTraceContextPropagator() });
  return { shutdown: () => provider.shutdown() };
}
