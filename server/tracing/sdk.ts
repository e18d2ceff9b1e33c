/**
 * The OpenTelemetry SDK, set up from the standard `OTEL_*` variables (docs/tracing.md). The only
 * module that imports `@opentelemetry/sdk-*` and the exporter: `server/tracing/index.ts` requires
 * it only when tracing is on, so a gateway without the variables never loads them.
 *
 * The sampler is the gateway's (./sampler.ts: `OTEL_TRACES_SAMPLER` for callers' traces, background
 * work apart). What the SDK reads itself: `OTEL_BSP_*` (batching), `OTEL_SPAN_*_LIMIT`, and the exporter's
 * `OTEL_EXPORTER_OTLP[_TRACES]_{ENDPOINT,HEADERS,TIMEOUT}`; `OTEL_SERVICE_NAME` and
 * `OTEL_RESOURCE_ATTRIBUTES` through the resource's env detector.
 */
import type { TextMapPropagator } from '@opentelemetry/api';
import { CompositePropagator, W3CBaggagePropagator, W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPTraceExporter as OtlpJsonExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { OTLPTraceExporter as OtlpProtoExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import {
  BatchSpanProcessor,
  ConsoleSpanExporter,
  NodeTracerProvider,
  SimpleSpanProcessor,
  type SpanProcessor,
} from '@opentelemetry/sdk-trace-node';
import { gatewayResource } from '../otel-resource';
import { GatewaySampler } from './sampler';
import type { OtlpProtocol, PropagatorName, SamplerSettings, TraceExporterName } from './settings';

/** What `startTracing` needs of the SDK: a flush-and-stop for the graceful shutdown. */
export interface TracingSdk {
  /** Exports the spans still batched, then stops the exporters. */
  shutdown(): Promise<void>;
}

const PROPAGATOR: Record<PropagatorName, () => TextMapPropagator> = {
  tracecontext: () => new W3CTraceContextPropagator(),
  baggage: () => new W3CBaggagePropagator(),
};

/** The OTLP/HTTP exporter for the protocol: protobuf (`application/x-protobuf`) or JSON. */
const otlpExporter = (protocol: OtlpProtocol) =>
  protocol === 'http/json' ? new OtlpJsonExporter() : new OtlpProtoExporter();

/** Registers a tracer provider, the propagators (`OTEL_PROPAGATORS`) and the async context manager globally. */
export function registerSdk(o: {
  exporters: readonly TraceExporterName[];
  protocol: OtlpProtocol;
  propagators: readonly PropagatorName[];
  sampler: SamplerSettings;
  backgroundRatio: number;
  serviceName: string;
  serviceVersion: string;
}): TracingSdk {
  const processors: SpanProcessor[] = o.exporters.map((e) =>
    e === 'console'
      ? new SimpleSpanProcessor(new ConsoleSpanExporter())
      : new BatchSpanProcessor(otlpExporter(o.protocol)),
  );
  const resource = gatewayResource(o.serviceName, o.serviceVersion);
  const provider = new NodeTracerProvider({
    resource,
    spanProcessors: processors,
    sampler: new GatewaySampler(o.sampler, o.backgroundRatio),
  });
  // With `none`, an empty composite: nothing is read from callers or sent to backends.
  provider.register({
    propagator: new CompositePropagator({ propagators: o.propagators.map((p) => PROPAGATOR[p]()) }),
  });
  return { shutdown: () => provider.shutdown() };
}
