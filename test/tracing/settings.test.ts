/** When the OTEL_* variables turn tracing on, and what they are refused for (server/tracing/settings.ts). */
import { ConfigError } from '../../adapters/contract/settings';
import { readTracingSettings } from '../../server/tracing';

describe('readTracingSettings', () => {
  it('should be off without an exporter or an endpoint, with OTEL_TRACES_EXPORTER=none, and with OTEL_SDK_DISABLED=true', () => {
    expect(readTracingSettings({})).toBeNull();
    expect(readTracingSettings({ OTEL_SERVICE_NAME: 'x', OTEL_TRACES_SAMPLER: 'always_on' })).toBeNull();
    expect(
      readTracingSettings({ OTEL_TRACES_EXPORTER: 'none', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318' }),
    ).toBeNull();
    expect(readTracingSettings({ OTEL_SDK_DISABLED: 'true', OTEL_TRACES_EXPORTER: 'otlp' })).toBeNull();
  });

  it('should be on with an OTLP endpoint (otlp) or an exporter, named volume-gateway unless OTEL_SERVICE_NAME says otherwise', () => {
    expect(readTracingSettings({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318' })).toEqual({
      exporters: ['otlp'],
      sampler: { name: 'parentbased_always_on', ratio: 1 },
      backgroundRatio: 0,
      serviceName: 'volume-gateway',
      protocol: 'http/protobuf',
      propagators: ['tracecontext', 'baggage'],
      ignoredPropagators: [],
    });
    expect(readTracingSettings({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://c:4318/v1/traces' })?.exporters).toEqual([
      'otlp',
    ]);
    expect(readTracingSettings({ OTEL_TRACES_EXPORTER: 'console, otlp', OTEL_SERVICE_NAME: 'gw-eu' })).toMatchObject({
      exporters: ['console', 'otlp'],
      serviceName: 'gw-eu',
    });
  });

  it('should refuse an unknown exporter, grpc and an unknown protocol; take http/protobuf (the default) and http/json, the traces form winning', () => {
    const on = { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318' };
    expect(() => readTracingSettings({ OTEL_TRACES_EXPORTER: 'jaeger' })).toThrow(ConfigError);
    expect(() => readTracingSettings({ ...on, OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' })).toThrow(/grpc is not supported/);
    expect(() => readTracingSettings({ ...on, OTEL_EXPORTER_OTLP_PROTOCOL: 'thrift' })).toThrow(ConfigError);
    expect(readTracingSettings(on)?.protocol).toBe('http/protobuf');
    expect(readTracingSettings({ ...on, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf' })?.protocol).toBe(
      'http/protobuf',
    );
    expect(readTracingSettings({ ...on, OTEL_EXPORTER_OTLP_PROTOCOL: 'HTTP/JSON' })?.protocol).toBe('http/json');
    expect(
      readTracingSettings({
        ...on,
        OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
        OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'http/protobuf',
      })?.protocol,
    ).toBe('http/protobuf');
  });

  it('should read OTEL_PROPAGATORS: tracecontext,baggage by default, none for none, unknown names set aside to be warned about', () => {
    const on = { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318' };
    const pick = (v: string) => {
      const s = readTracingSettings({ ...on, OTEL_PROPAGATORS: v })!;
      return { propagators: s.propagators, ignored: s.ignoredPropagators };
    };
    expect(pick('')).toEqual({ propagators: ['tracecontext', 'baggage'], ignored: [] });
    expect(pick('tracecontext')).toEqual({ propagators: ['tracecontext'], ignored: [] });
    expect(pick(' baggage , TraceContext ')).toEqual({ propagators: ['baggage', 'tracecontext'], ignored: [] });
    expect(pick('none')).toEqual({ propagators: [], ignored: [] });
    expect(pick('tracecontext,b3,xray')).toEqual({ propagators: ['tracecontext'], ignored: ['b3', 'xray'] });
  });

  it('should read the sampler as the SDK does, refusing what it would only log, and the background ratio (0 unless set)', () => {
    const on = { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318' };
    expect(
      readTracingSettings({ ...on, OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: '0.1' })
        ?.sampler,
    ).toEqual({
      name: 'parentbased_traceidratio',
      ratio: 0.1,
    });
    expect(readTracingSettings({ ...on, OTEL_TRACES_SAMPLER: 'Always_Off' })?.sampler.name).toBe('always_off');
    expect(() => readTracingSettings({ ...on, OTEL_TRACES_SAMPLER: 'jaeger_remote' })).toThrow(/unknown sampler/);
    expect(() =>
      readTracingSettings({ ...on, OTEL_TRACES_SAMPLER: 'traceidratio', OTEL_TRACES_SAMPLER_ARG: '2' }),
    ).toThrow(ConfigError);
    expect(readTracingSettings(on)?.backgroundRatio).toBe(0);
    expect(readTracingSettings({ ...on, OTEL_TRACES_BACKGROUND_SAMPLE_RATIO: '0.25' })?.backgroundRatio).toBe(0.25);
    for (const bad of ['-0.1', '1.5', 'half'])
      expect(() => readTracingSettings({ ...on, OTEL_TRACES_BACKGROUND_SAMPLE_RATIO: bad })).toThrow(
        /OTEL_TRACES_BACKGROUND_SAMPLE_RATIO.*from 0 to 1/,
      );
  });
});
