/** When the OTEL_* variables turn tracing on, and what they are refused for (server/tracing/settings.ts). */
import { ConfigError } from '../../adapters/contract/settings';
import { readTracingSettings } from '../../server/tracing';

describe('readTracingSettings', () => {
  it('should be off without an exporter or an endpoint, with OTEL_TRACES_EXPORTER=none, and with OTEL_SDK_DISABLED=true', () => {
    expect(readTracingSettings({})).toBeNull();
    expect(readTracingSettings({ OTEL_SERVICE_NAME: 'x', OTEL_TRACES_SAMPLER: 'always_on' })).toBeNull();
    expect(readTracingSettings({ OTEL_TRACES_EXPORTER: 'none', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318' })).toBeNull();
    expect(readTracingSettings({ OTEL_SDK_DISABLED: 'true', OTEL_TRACES_EXPORTER: 'otlp' })).toBeNull();
  });

  it('should be on with an OTLP endpoint (otlp) or an exporter, named volume-gateway unless OTEL_SERVICE_NAME says otherwise', () => {
    expect(readTracingSettings({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318' })).toEqual({ exporters: ['otlp'], serviceName: 'volume-gateway' });
    expect(readTracingSettings({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://c:4318/v1/traces' })?.exporters).toEqual(['otlp']);
    expect(readTracingSettings({ OTEL_TRACES_EXPORTER: 'console, otlp', OTEL_SERVICE_NAME: 'gw-eu' })).toEqual({ exporters: ['console', 'otlp'], serviceName: 'gw-eu' });
  });

  it('should refuse an unknown exporter and grpc, and send http/protobuf as http/json', () => {
    expect(() => readTracingSettings({ OTEL_TRACES_EXPORTER: 'jaeger' })).toThrow(ConfigError);
    expect(() => readTracingSettings({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4317', OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' })).toThrow(/grpc is not supported/);
    expect(readTracingSettings({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf' })?.protocolFallback).toBe('http/protobuf');
    expect(readTracingSettings({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' })?.protocolFallback).toBeUndefined();
  });
});
