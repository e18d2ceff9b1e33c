/**
 * The config definition: every setting of the gateway, declared once (environment variable,
 * config-file key, rule with bounds, default, description), grouped by section as in the config
 * file. Each section lives next to its reader (server/http/config.ts …); backend settings come
 * from the backend modules (the common ones from the contract). Derived from it: the readers'
 * values, the unknown-name check (server/config-names.ts), the config file's JSON Schema
 * (server/config-schema.ts, committed as config.schema.json) and the documentation test.
 *
 * Adding a setting: declare it in its section (or a new section here); read it with `readGroup`.
 */
import { COMMON_BACKEND_SETTINGS, type BackendModule, type CommonBackendSettings } from '../adapters/contract/module';
import { DEFAULT_MAX_CONCURRENT_READS } from '../domain/context';
import { integer, oneOf, setting, text, type SettingsGroup } from '../adapters/contract/settings';
import { DEMO_SETTINGS } from './demo-settings';
import { DOCTOR_SETTINGS } from './doctor-config';
import { HTTP_SETTINGS } from './http/config';
import { LIMITS_SETTINGS } from './limits/config';
import { LIVE_SETTINGS } from './live-config';
import { DEFAULT_SHUTDOWN_DRAIN_MS } from './readiness';
import { EXECUTION_ENGINES, type ExecutionEngine } from './execution/compiled';
import { COMPILED_DOCUMENTS_DEFAULTS } from './execution/compiled-documents';
import { REDIS_SETTINGS } from './redis-config';
import { TLS_SETTINGS } from './http/tls-config';
import { BREAKER_SETTINGS, READINESS_SETTINGS } from './resilience-config';
import { WS_SETTINGS } from './ws/config';

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/** The listen address with backends configured: every interface. */
export const DEFAULT_HOST = '0.0.0.0';
/** The listen address in demo mode (no backends): loopback, since the demo hands out its management tokens. */
export const DEMO_HOST = '127.0.0.1';

export const LOG_FORMATS = ['json', 'pretty'] as const;
/** How log lines are written: JSON objects (log pipelines) or human-readable lines (pino-pretty). */
export type LogFormat = (typeof LOG_FORMATS)[number];

/** The gateway's top-level settings. */
export const SERVER_SETTINGS = {
  $schema: setting({
    rule: text(),
    doc: "The config file's JSON Schema (config.schema.json), for editors; not read by the gateway.",
  }),
  port: setting({
    env: 'PORT',
    rule: integer(0, 65535),
    default: 4000,
    doc: 'TCP port; GraphQL at /graphql, plus /healthz, /readyz.',
  }),
  managementPort: setting({
    env: 'MANAGEMENT_PORT',
    rule: integer(0, 65535),
    doc: 'A second TCP port, on the same HOST, serving only /healthz, /readyz and /metrics over plain HTTP without a client certificate (for probes and Prometheus when TLS_CLIENT_CA_FILE asks every client of PORT for one). None: not opened.',
  }),
  host: setting({
    env: 'HOST',
    rule: text({ trim: true }),
    defaultNote: `${DEFAULT_HOST}; in demo mode (no backends) ${DEMO_HOST}`,
    doc: 'Listen address. The demo hands out its management tokens on the GraphiQL page, so it stays on loopback unless HOST is set.',
  }),
  logLevel: setting<LogLevel>({
    env: 'LOG_LEVEL',
    rule: oneOf(LOG_LEVELS),
    default: 'info',
    doc: 'pino log level; debug logs one line per backend call.',
  }),
  logFormat: setting<LogFormat>({
    env: 'LOG_FORMAT',
    rule: oneOf(LOG_FORMATS),
    defaultNote: '`pretty` when stdout is a terminal or in demo mode (no backends); else `json`',
    doc: 'Log lines as `json` (one object a line, for log pipelines) or `pretty` (human-readable lines, one a record, through pino-pretty; colored on a terminal). Both go through the same bounded stdout buffer (LOG_MAX_BUFFER_BYTES) and redact credentials alike.',
  }),
  logMaxBufferBytes: setting({
    env: 'LOG_MAX_BUFFER_BYTES',
    rule: integer(65_536, 1_073_741_824),
    // 16 MiB: about 80,000 request lines.
    default: 16 * 1_048_576,
    doc: 'Most bytes of log lines held while stdout does not take them (its reader stalled); lines beyond are dropped and counted (gateway_log_lines_dropped_total) instead of growing memory without bound.',
  }),
  executionEngine: setting<ExecutionEngine>({
    env: 'EXECUTION_ENGINE',
    rule: oneOf(EXECUTION_ENGINES),
    default: 'compiled',
    doc: 'How queries and mutations over HTTP run: `compiled` (graphql-jit; a document compiled at its COMPILED_DOCUMENTS_SIGHTINGS-th sighting and kept within COMPILED_DOCUMENTS_MAX_BYTES, with graphql-js for federated traces, documents it cannot compile and documents not yet compiled) or `graphql-js` (interpreted). Same answers and errors either way.',
  }),
  compiledDocumentsMaxBytes: setting({
    env: 'COMPILED_DOCUMENTS_MAX_BYTES',
    rule: integer(1_048_576, 8 * 1024 ** 3),
    // 64 MiB: about 270 lists of volumes with every field and their attachments (about 250 KiB each, estimated).
    default: COMPILED_DOCUMENTS_DEFAULTS.maxBytes,
    doc: 'With compiled execution: most bytes the compiled documents kept may hold (each estimated from its generated code and its parsed document), least recently used dropped first; one document may take an eighth at most (a larger one runs on graphql-js). Trusted documents are kept outside it.',
  }),
  compiledDocumentsSightings: setting({
    env: 'COMPILED_DOCUMENTS_SIGHTINGS',
    rule: integer(1, 100),
    default: COMPILED_DOCUMENTS_DEFAULTS.sightings,
    doc: 'With compiled execution: a document is compiled at its n-th sighting, the earlier ones run on graphql-js, so documents sent once are never compiled; 1 compiles every document at once. Trusted documents are compiled at their first.',
  }),
  maxConcurrentReads: setting({
    env: 'MAX_CONCURRENT_READS',
    rule: integer(1, 256),
    default: DEFAULT_MAX_CONCURRENT_READS,
    doc: "Most backend reads one request's loaders run at once.",
  }),
  maxBodyBytes: setting({
    env: 'MAX_BODY_BYTES',
    rule: integer(1024, 64 * 1_048_576),
    default: 1_048_576,
    doc: 'Largest accepted request body in bytes (413 above).',
  }),
  shutdownGraceMs: setting({
    env: 'SHUTDOWN_GRACE_MS',
    rule: integer(0, 600_000),
    default: 10_000,
    doc: 'On SIGTERM, how long in-flight requests may take before connections are cut, ms.',
  }),
  shutdownDrainMs: setting({
    env: 'SHUTDOWN_DRAIN_MS',
    rule: integer(0, 600_000),
    defaultNote: `${DEFAULT_SHUTDOWN_DRAIN_MS}; in demo mode (no backends) 0`,
    doc: 'On SIGTERM, how long /readyz answers 503 (draining) while the gateway keeps serving, before it stops accepting, ms: time for a load balancer to take the replica out.',
  }),
  configFile: setting({
    env: 'GATEWAY_CONFIG',
    file: false,
    rule: text(),
    doc: 'Path of the JSON config file (or `--config FILE`).',
  }),
  nodeEnv: setting({
    env: 'NODE_ENV',
    file: false,
    rule: text(),
    doc: '`production`: no demo mode (no backend is an error) and no introspection by default.',
  }),
} as const;

/** Every gateway setting but the backends, by config-file section. */
export const GATEWAY_SETTINGS = {
  ...SERVER_SETTINGS,
  redis: REDIS_SETTINGS,
  http: HTTP_SETTINGS,
  tls: TLS_SETTINGS,
  limits: LIMITS_SETTINGS,
  ws: WS_SETTINGS,
  live: LIVE_SETTINGS,
  doctor: DOCTOR_SETTINGS,
  breaker: BREAKER_SETTINGS,
  readiness: READINESS_SETTINGS,
  demo: DEMO_SETTINGS,
} as const satisfies SettingsGroup;

/** The backends: `GATEWAY_BACKENDS` in the environment, the list `backends` in the file (each entry: {@link backendSettings}). */
export const BACKENDS_SETTING = setting({
  env: 'GATEWAY_BACKENDS',
  rule: text(),
  doc: 'The backends: id=kind[@url],… in the environment, a list of entries in the file. None: demo mode (refused when NODE_ENV is production).',
});

/** Prefix of a backend's own variables: `GATEWAY_BACKEND_<ID>_` + a setting's `env`. */
export const BACKEND_ENV_PREFIX = 'GATEWAY_BACKEND_<ID>_';

/** Every setting a backend of this module's kind has: the common ones and the module's own. */
export const backendSettings = (m: BackendModule<CommonBackendSettings>): SettingsGroup => ({
  ...COMMON_BACKEND_SETTINGS,
  ...m.settings,
});
