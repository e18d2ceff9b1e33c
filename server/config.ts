/**
 * Gateway configuration, read from an optional JSON file and environment variables (environment
 * wins), validated at start. Every error names the setting. What is read is declared once in the
 * config definition (server/config-definition.ts); docs/configuration.md lists the same settings.
 */
import { readFileSync } from 'node:fs';
import { ConfigError, readGroup, readSetting, entryFromEnv } from '../adapters/contract/settings';
import { checkSettingNames, envId } from './config-names';
import { checkConflicts } from './config-conflicts';
import { COMMON_BACKEND_SETTINGS, type CommonBackendSettings } from '../adapters/contract/module';
import { BACKEND_MODULES, moduleForKind } from './kinds';
import {
  BACKEND_ENV_PREFIX,
  BACKENDS_SETTING,
  DEFAULT_HOST,
  DEMO_HOST,
  SERVER_SETTINGS,
  type LogFormat,
  type LogLevel,
} from './config-definition';
import { loadRedisConfig, type RedisConfig } from './redis-config';
import { loadHttpEdgeConfig, type HttpEdgeConfig } from './http/config';
import { loadTlsConfig, type TlsConfig } from './http/tls-config';
import { limitsConfig, type LimitsConfig } from './limits/config';
import { loadWsConfig, type WsConfig } from './ws/config';
import { loadLiveConfig, type LiveConfig } from './live-config';
import { loadDoctorConfig, type DoctorConfig } from './doctor-config';
import { loadResilienceConfig, type ResilienceConfig } from './resilience-config';
import { DEFAULT_SHUTDOWN_DRAIN_MS } from './readiness';
import type { ExecutionEngine } from './execution/compiled';

/**
 * One configured backend: the settings every kind has plus its own, as its module parsed them
 * (adapters/<kind>/module.ts). Its module's `create` builds it.
 */
export type BackendConfig = CommonBackendSettings;

/**
 * A backend entry as code writes one (the demo, tests): the common settings plus any of its
 * kind's own, which only its module reads.
 */
export type BackendEntry = BackendConfig | (BackendConfig & Readonly<Record<string, unknown>>);

/** The gateway's configuration as read; each setting's meaning and default are in the config definition (server/config-definition.ts). */
export interface GatewayConfig {
  port: number;
  /** @default '0.0.0.0'; in demo mode (no backends) '127.0.0.1' */
  host: string;
  logLevel: LogLevel;
  /** `LOG_FORMAT`. @default undefined: chosen at start (server/logger.ts `chooseLogFormat`: pretty on a terminal or in demo mode, else json) */
  logFormat?: LogFormat;
  /** Most bytes of log lines held while stdout does not take them; more are dropped and counted. @default 16 MiB */
  logMaxBufferBytes: number;
  /** How queries and mutations over HTTP run. @default 'compiled' */
  executionEngine: ExecutionEngine;
  /** With compiled execution: most estimated bytes of compiled documents kept. @default 64 MiB */
  compiledDocumentsMaxBytes: number;
  /** With compiled execution: the sighting at which a document is compiled. @default 2 */
  compiledDocumentsSightings: number;
  maxConcurrentReads: number;
  /** Configured backends; empty = demo mode (embedded simulators), refused when NODE_ENV is `production`. */
  backends: BackendConfig[];
  maxBodyBytes: number;
  shutdownGraceMs: number;
  /** On SIGTERM, how long /readyz answers 503 while serving before the graceful stop, ms. @default 5000; in demo mode 0 */
  shutdownDrainMs: number;
  /** Shared store for scale-out (operation records). @default none: records stay in this process */
  redis?: RedisConfig;
  /** HTTPS and WSS, and client certificates (server/http/tls-config.ts). @default none: plain HTTP */
  tls?: TlsConfig;
  /** Port serving /healthz, /readyz and /metrics over plain HTTP (server/http/management.ts). @default none */
  managementPort?: number;
  /** The HTTP edge: header size, per-caller limits, CORS, trusted documents (server/http/config.ts). */
  http: HttpEdgeConfig;
  /** Operation limits (server/limits/config.ts). */
  limits: LimitsConfig;
  /** graphql-ws sockets (server/ws/config.ts). */
  ws: WsConfig;
  /** The live path (server/live-config.ts). */
  live: LiveConfig;
  /** The volume doctor (server/doctor-config.ts). @default on, a pass a minute */
  doctor?: DoctorConfig;
  /** Circuit breakers, merged lists' per-backend deadline, readiness (files `breaker`, `readiness`; server/resilience-config.ts). */
  resilience: ResilienceConfig;
}

function backend(raw: Record<string, unknown>, where: string): BackendConfig {
  const src = { file: raw, path: where };
  const id = readSetting(COMMON_BACKEND_SETTINGS.id, 'id', src);
  if (id === undefined)
    throw new ConfigError(`${where}.id`, 'must be 1-63 letters, digits, "-" or "_", starting with a letter or digit');
  const module = typeof raw.kind === 'string' ? moduleForKind(raw.kind) : undefined;
  if (!module) {
    throw new ConfigError(
      `${where}.kind`,
      `unknown backend kind ${JSON.stringify(raw.kind)} (known: ${BACKEND_MODULES.map((m) => m.kind).join(', ')})`,
    );
  }
  if (module.needsUrl && raw.url === undefined) {
    throw new ConfigError(
      `${where}.url`,
      `is missing: kind ${module.kind} needs a URL (GATEWAY_BACKENDS entry id=${module.kind}@URL, or "url" in the file)`,
    );
  }
  // A kind that talks no HTTP may go without a URL; one given is checked all the same.
  const { url, ...common } = readGroup(COMMON_BACKEND_SETTINGS, src);
  return module.parseSettings(raw, { ...common, id, kind: module.kind, ...(url !== undefined ? { url } : {}) }, where);
}

/** A module's own part of a `GATEWAY_BACKENDS` entry: each of its settings whose variable is set, completed by its `envEntry`. */
function kindEnvEntry(
  module: NonNullable<ReturnType<typeof moduleForKind>>,
  get: (name: string) => string | undefined,
): Record<string, unknown> {
  const entry = entryFromEnv(module.settings, get);
  return module.envEntry ? module.envEntry(entry) : entry;
}

/** The example in a malformed `GATEWAY_BACKENDS` entry's message: the first kind that takes a URL. */
const ENTRY_EXAMPLE = `east=${BACKEND_MODULES.find((m) => m.needsUrl)?.kind ?? 'kind'}@http://10.0.0.1:4646`;

/** Env form of a backend's settings: `GATEWAY_BACKEND_<ID>_<SETTING>` with the id upper-cased, `-` → `_`. */
const envKey = (id: string, setting: string): string => BACKEND_ENV_PREFIX.replace('<ID>', envId(id)) + setting;

/**
 * Backends from the environment:
 * - `GATEWAY_BACKENDS=id=kind[@url],…`, with per-backend `GATEWAY_BACKEND_<ID>_TIMEOUT_MS`,
 *   `_MAX_CONNECTIONS`, `_READ_RETRIES` and the kind's own variables (its module's `settings`);
 * - or the kinds' own client variables (a module's `nativeEnv`: `NOMAD_ADDR`, an openrc's `OS_*`),
 *   one backend each.
 */
function backendsFromEnv(env: NodeJS.ProcessEnv): Array<Record<string, unknown>> | undefined {
  const list = env[BACKENDS_SETTING.env!]?.trim();
  // Set but empty is a mistake (a template's missing value), not a request for the demo.
  if (list === '')
    throw new ConfigError('GATEWAY_BACKENDS', 'is set but empty: list the backends as id=kind@url,… or unset it');
  if (list) {
    return list.split(',').map((entry, i) => {
      const m = /^\s*([^=\s]+)\s*=\s*([a-z]+)(?:@(\S+))?\s*$/.exec(entry);
      if (!m)
        throw new ConfigError(
          'GATEWAY_BACKENDS',
          `entry ${i + 1} (${JSON.stringify(entry)}) must look like id=kind@url, e.g. ${ENTRY_EXAMPLE}`,
        );
      const [, id, kind, u] = m as unknown as [string, string, string, string | undefined];
      // A blank variable counts as unset, as everywhere.
      const get = (setting: string): string | undefined =>
        env[envKey(id, setting)]?.trim() ? env[envKey(id, setting)] : undefined;
      const module = moduleForKind(kind);
      return {
        id,
        kind,
        url: u,
        ...entryFromEnv(COMMON_BACKEND_SETTINGS, get),
        ...(module ? kindEnvEntry(module, get) : {}),
      };
    });
  }
  const fromEnv = BACKEND_MODULES.flatMap((m) => {
    const entry = m.nativeEnv?.read(env);
    return entry ? [entry] : [];
  });
  if (fromEnv.length > 0) return fromEnv;
  return undefined;
}

function readFile(path: string): Record<string, unknown> {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new ConfigError(
      '--config',
      `cannot read ${path}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`,
    );
  }
  // A byte-order mark (Windows editors save one) is not JSON, and says nothing: dropped.
  if (text.startsWith('\uFEFF')) text = text.slice(1);
  try {
    const parsed: unknown = JSON.parse(text);
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
      throw new Error('top level must be an object');
    return parsed as Record<string, unknown>;
  } catch (err) {
    throw new ConfigError('--config', `${path} is not valid JSON: ${(err as Error).message}`);
  }
}

/**
 * Builds the configuration from an optional file (`configPath`, or env `GATEWAY_CONFIG`) and the
 * environment. @throws ConfigError naming the first bad setting.
 */
export function loadConfig(env: NodeJS.ProcessEnv = process.env, configPath?: string): GatewayConfig {
  const filePath = configPath ?? env.GATEWAY_CONFIG;
  const file = filePath ? readFile(filePath) : {};
  // First: a misspelled name is the likeliest cause of whatever else looks wrong.
  checkSettingNames(env, file, filePath);
  const rawBackends = backendsFromEnv(env) ?? file.backends;
  if (rawBackends !== undefined && !Array.isArray(rawBackends)) throw new ConfigError('backends', 'must be a list');
  const backends = (rawBackends ?? []).map((b, i) => {
    if (typeof b !== 'object' || b === null) throw new ConfigError(`backends[${i}]`, 'must be an object');
    return backend(b as Record<string, unknown>, `backends[${i}]`);
  });
  const ids = new Set<string>();
  for (const b of backends) {
    if (ids.has(b.id)) throw new ConfigError('backends', `backend id "${b.id}" is used twice`);
    ids.add(b.id);
  }
  // Demo mode starts simulators and prints their management tokens: never in production, where
  // no backend can only be a mistake.
  if (backends.length === 0 && env.NODE_ENV === 'production') {
    throw new ConfigError(
      'backends',
      `none is configured, and with NODE_ENV=production the gateway never starts its demo backends: set ${['GATEWAY_BACKENDS (id=kind@url,…)', ...BACKEND_MODULES.flatMap((m) => (m.nativeEnv ? [m.nativeEnv.trigger] : []))].join(', ')} or the config file's "backends"`,
    );
  }
  const top = readGroup(SERVER_SETTINGS, { env, file, path: '' });
  const redisConfig = loadRedisConfig(env, file);
  const tls = loadTlsConfig(env, file);
  const http = loadHttpEdgeConfig(env, file);
  const ws = loadWsConfig(env, file);
  checkConflicts(
    {
      port: top.port,
      managementPort: top.managementPort,
      corsCredentials: http.cors.credentials,
      wsAllowedOrigins: ws.allowedOrigins,
    },
    env,
    file,
  );
  return {
    port: top.port,
    // The demo serves management tokens on its GraphiQL page: loopback unless HOST says otherwise.
    host: top.host || (backends.length === 0 ? DEMO_HOST : DEFAULT_HOST),
    logLevel: top.logLevel,
    ...(top.logFormat ? { logFormat: top.logFormat } : {}),
    logMaxBufferBytes: top.logMaxBufferBytes,
    executionEngine: top.executionEngine,
    compiledDocumentsMaxBytes: top.compiledDocumentsMaxBytes,
    compiledDocumentsSightings: top.compiledDocumentsSightings,
    maxConcurrentReads: top.maxConcurrentReads,
    maxBodyBytes: top.maxBodyBytes,
    shutdownGraceMs: top.shutdownGraceMs,
    // The demo stops at once: no load balancer watches it.
    shutdownDrainMs: top.shutdownDrainMs ?? (backends.length === 0 ? 0 : DEFAULT_SHUTDOWN_DRAIN_MS),
    backends,
    http,
    limits: limitsConfig(env, file, { demo: backends.length === 0 }),
    ws,
    live: loadLiveConfig(env, file),
    doctor: loadDoctorConfig(env, file),
    resilience: loadResilienceConfig(env, file),
    ...(redisConfig ? { redis: redisConfig } : {}),
    ...(tls ? { tls } : {}),
    ...(top.managementPort !== undefined ? { managementPort: top.managementPort } : {}),
  };
}
