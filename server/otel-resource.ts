/**
 * The OpenTelemetry resource the gateway's traces and metrics carry: `service.name` (`OTEL_SERVICE_NAME`
 * or `volume-gateway`), `service.version` (the package's), the SDK's defaults, and what
 * `OTEL_RESOURCE_ATTRIBUTES` adds. Imported only by the lazily loaded SDK modules
 * (server/tracing/sdk.ts, server/otlp-metrics/sdk.ts).
 */
import {
  defaultResource,
  detectResources,
  envDetector,
  resourceFromAttributes,
  type Resource,
} from '@opentelemetry/resources';
import { ATTR_SERVICE_NAME, ATTR_SERVICE_VERSION } from '@opentelemetry/semantic-conventions';

export function gatewayResource(serviceName: string, serviceVersion: string): Resource {
  return (
    defaultResource()
      .merge(resourceFromAttributes({ [ATTR_SERVICE_NAME]: serviceName, [ATTR_SERVICE_VERSION]: serviceVersion }))
      // OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES win.
      .merge(detectResources({ detectors: [envDetector] }))
  );
}
