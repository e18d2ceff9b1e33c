/**
 * Whether tracing is on, and with which exporters, from the standard `OTEL_*` variables
 * (docs/tracing.md). These are OpenTelemetry's settings, not the gateway's: they are not in the
 * config definition, and the unknown-setting check never looks under `OTEL_` (server/config-names.ts).
 */
import { ConfigError } from '../../adapters/contract/settings';

/** Span exporters the gateway can build (`OTEL_TRACES_EXPORTER`). */
export type TraceExporterName = 'otlp' | 'console';

/** How OTLP spans are sent (`OTEL_EXPORTER_OTLP[_TRACES]_PROTOCOL`). */
export type OtlpProtocol = 'http/protobuf' | 'http/json';

/** Propagators the gateway can use (`OTEL_PROPAGATORS`). */
export type PropagatorName = 'tracecontext' | 'baggage';

/** The samplers `OTEL_TRACES_SAMPLER` may name (the SDK's own set). */
export const SAMPLER_NAMES = [
  'always_on',
  'always_off',
  'traceidratio',
  'parentbased_always_on',
  'parentbased_always_off',
  'parentbased_traceidratio',
] as const;

/** The sampler of everything but background work. */
export interface SamplerSettings {
  /** `OTEL_TRACES_SAMPLER`. @default 'parentbased_always_on' */
  name: (typeof SAMPLER_NAMES)[number];
  /** `OTEL_TRACES_SAMPLER_ARG`, for the ratio samplers, 0–1. @default 1 */
  ratio: number;
}

/** What tracing runs with, once on. */
export interface TracingSettings {
  /** How traces of callers' requests (and of event deliveries) are sampled. */
  sampler: SamplerSettings;
  /**
   * The share of background traces (watcher reads, readiness probes) sampled, 0–1:
   * `OTEL_TRACES_BACKGROUND_SAMPLE_RATIO`, the gateway's own variable (OpenTelemetry has none).
   * @default 0 (none)
   */
  backgroundRatio: number;
  exporters: TraceExporterName[];
  /** `OTEL_SERVICE_NAME`, else this. */
  serviceName: string;
  /** The OTLP exporter's protocol. @default 'http/protobuf' (OTLP's default) */
  protocol: OtlpProtocol;
  /** `OTEL_PROPAGATORS`, known names only, in order; empty with `none`. @default ['tracecontext', 'baggage'] */
  propagators: PropagatorName[];
  /** Names in `OTEL_PROPAGATORS` the gateway does not know: warned about and ignored, as the SDK does. */
  ignoredPropagators: string[];
}

/**
 * The `OTEL_*` variables the gateway honours, read here or by the SDK itself (`--help`,
 * docs/tracing.md). The `_TRACES_` forms of the exporter's variables are honoured too.
 */
export const OTEL_VARIABLES: readonly string[] = [
  'OTEL_TRACES_EXPORTER',
  'OTEL_EXPORTER_OTLP_ENDPOINT',
  'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT',
  'OTEL_EXPORTER_OTLP_PROTOCOL',
  'OTEL_EXPORTER_OTLP_HEADERS',
  'OTEL_EXPORTER_OTLP_TIMEOUT',
  'OTEL_PROPAGATORS',
  'OTEL_SERVICE_NAME',
  'OTEL_RESOURCE_ATTRIBUTES',
  'OTEL_TRACES_SAMPLER',
  'OTEL_TRACES_SAMPLER_ARG',
  'OTEL_TRACES_BACKGROUND_SAMPLE_RATIO',
  'OTEL_BSP_*',
  'OTEL_SDK_DISABLED',
];

/** The service name spans carry unless `OTEL_SERVICE_NAME` says otherwise. */
export const DEFAULT_SERVICE_NAME = 'volume-gateway';

const EXPORTERS: ReadonlySet<string> = new Set(['otlp', 'console', 'none']);

const PROPAGATORS: ReadonlySet<string> = new Set<PropagatorName>(['tracecontext', 'baggage']);

const set = (v: string | undefined): v is string => v !== undefined && v.trim() !== '';

/**
 * The tracing settings, or null when tracing is off: neither `OTEL_TRACES_EXPORTER` nor an OTLP
 * endpoint (`OTEL_EXPORTER_OTLP_ENDPOINT`, `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`) is set, or
 * `OTEL_TRACES_EXPORTER=none`, or `OTEL_SDK_DISABLED=true`.
 * @throws ConfigError for an exporter or protocol the gateway cannot use
 */
export function readTracingSettings(env: NodeJS.ProcessEnv): TracingSettings | null {
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === 'true') return null;
  const endpoint = set(env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) || set(env.OTEL_EXPORTER_OTLP_ENDPOINT);
  if (!set(env.OTEL_TRACES_EXPORTER) && !endpoint) return null;
  const names = set(env.OTEL_TRACES_EXPORTER)
    ? [
        ...new Set(
          env.OTEL_TRACES_EXPORTER.split(',')
            .map((s) => s.trim().toLowerCase())
            .filter((s) => s !== ''),
        ),
      ]
    : ['otlp'];
  const unknown = names.filter((n) => !EXPORTERS.has(n));
  if (unknown.length > 0)
    throw new ConfigError(
      'OTEL_TRACES_EXPORTER',
      `unknown exporter ${unknown.map((n) => JSON.stringify(n)).join(', ')}: use otlp, console or none`,
    );
  if (names.includes('none')) return null;
  const exporters = names as TraceExporterName[];
  const protocol = (env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL ?? env.OTEL_EXPORTER_OTLP_PROTOCOL)?.trim().toLowerCase();
  if (exporters.includes('otlp') && protocol === 'grpc') {
    throw new ConfigError(
      'OTEL_EXPORTER_OTLP_PROTOCOL',
      'grpc is not supported: use http/protobuf or http/json (the Collector takes OTLP/HTTP on port 4318)',
    );
  }
  if (exporters.includes('otlp') && set(protocol) && protocol !== 'http/json' && protocol !== 'http/protobuf') {
    throw new ConfigError(
      'OTEL_EXPORTER_OTLP_PROTOCOL',
      `unknown protocol ${JSON.stringify(protocol)}: use http/protobuf or http/json`,
    );
  }
  return {
    exporters,
    sampler: readSampler(env),
    backgroundRatio: set(env.OTEL_TRACES_BACKGROUND_SAMPLE_RATIO)
      ? ratioOf('OTEL_TRACES_BACKGROUND_SAMPLE_RATIO', env.OTEL_TRACES_BACKGROUND_SAMPLE_RATIO)
      : 0,
    serviceName: set(env.OTEL_SERVICE_NAME) ? env.OTEL_SERVICE_NAME.trim() : DEFAULT_SERVICE_NAME,
    protocol: protocol === 'http/json' ? 'http/json' : 'http/protobuf',
    ...readPropagators(env.OTEL_PROPAGATORS),
  };
}

/** A ratio from 0 to 1. @throws ConfigError for anything else */
function ratioOf(variable: string, v: string): number {
  const r = Number(v.trim());
  if (!Number.isFinite(r) || r < 0 || r > 1)
    throw new ConfigError(variable, `must be a number from 0 to 1, not ${JSON.stringify(v)}`);
  return r;
}

/**
 * `OTEL_TRACES_SAMPLER` and its `OTEL_TRACES_SAMPLER_ARG`: the gateway builds the sampler (the SDK
 * would, but the background ratio wraps it), so it reads them as the SDK does, refusing what the
 * SDK would only log and replace.
 * @throws ConfigError for an unknown sampler or a ratio outside 0–1
 */
function readSampler(env: NodeJS.ProcessEnv): SamplerSettings {
  const name = set(env.OTEL_TRACES_SAMPLER) ? env.OTEL_TRACES_SAMPLER.trim().toLowerCase() : 'parentbased_always_on';
  if (!(SAMPLER_NAMES as readonly string[]).includes(name))
    throw new ConfigError(
      'OTEL_TRACES_SAMPLER',
      `unknown sampler ${JSON.stringify(name)}: use ${SAMPLER_NAMES.join(', ')}`,
    );
  const arg = env.OTEL_TRACES_SAMPLER_ARG;
  return {
    name: name as SamplerSettings['name'],
    ratio: name.endsWith('traceidratio') && set(arg) ? ratioOf('OTEL_TRACES_SAMPLER_ARG', arg) : 1,
  };
}

/** `OTEL_PROPAGATORS` (comma-separated; `none` alone means none): unknown names are set aside, not refused, as the SDK does. */
function readPropagators(v: string | undefined): Pick<TracingSettings, 'propagators' | 'ignoredPropagators'> {
  const names = set(v)
    ? [
        ...new Set(
          v
            .split(',')
            .map((s) => s.trim().toLowerCase())
            .filter((s) => s !== ''),
        ),
      ]
    : ['tracecontext', 'baggage'];
  if (names.includes('none')) return { propagators: [], ignoredPropagators: names.filter((n) => n !== 'none') };
  return {
    propagators: names.filter((n): n is PropagatorName => PROPAGATORS.has(n)),
    ignoredPropagators: names.filter((n) => !PROPAGATORS.has(n)),
  };
}
