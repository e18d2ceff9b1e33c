/**
 * Gateway configuration: one schema, read from an optional JSON file and environment variables
 * (environment wins), validated at start. Every error names the setting. docs/configuration.md
 * lists the same settings.
 */
import { readFileSync } from 'node:fs';
import { ConfigError, numberSetting } from './config-values';
import { checkSettingNames, envId } from './config-names';
import type { CommonBackendSettings } from '../adapters/contract/module';
import { BACKEND_MODULES, moduleForKind } from '../adapters/modules';
import { loadHttpEdgeConfig, type HttpEdgeConfig } from './http/config';
import { limitsConfig, type LimitsConfig } from './limits/config';
import { loadWsConfig, type WsConfig } from './ws/config';
import { loadLiveConfig, type LiveConfig } from './live-config';
import { loadResilienceConfig, type ResilienceConfig } from './resilience-config';
import type { RedisConfig } from './redis';

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

export interface GatewayConfig {
  /** TCP port. @default 4000 (env `PORT`) */
  port: number;
  /** Listen address. @default '0.0.0.0'; in demo mode (no backends) '127.0.0.1' (env `HOST`) */
  host: string;
  /** pino log level. @default 'info' (env `LOG_LEVEL`) */
  logLevel: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
  /** Most backend reads one request's loaders run at once. @default 16 (env `MAX_CONCURRENT_READS`) */
  maxConcurrentReads: number;
  /** Configured backends; empty = demo mode (embedded simulators), refused when NODE_ENV is `production`. */
  backends: BackendConfig[];
  /** Largest accepted request body in bytes. @default 1048576 (env `MAX_BODY_BYTES`) */
  maxBodyBytes: number;
  /** On SIGTERM, how long in-flight requests may take before connections are cut. @default 10000 (env `SHUTDOWN_GRACE_MS`) */
  shutdownGraceMs: number;
  /** Shared store for scale-out (operation records). @default none: records stay in this process */
  redis?: RedisConfig;
  /** The HTTP edge: header size, per-caller limits, CORS, trusted documents (server/http/config.ts). */
  http: HttpEdgeConfig;
  /** Operation limits (env `MAX_DEPTH` …, file `limits`; server/limits/config.ts). */
  limits: LimitsConfig;
  /** graphql-ws sockets: origins, payload, connection and subscription limits (env `WS_…`, file `ws`; server/ws/config.ts). */
  ws: WsConfig;
  /** The live path: event-log retention, access-check reuse, queues (env `LIVE_…`, file `live`; server/live-config.ts). */
  live: LiveConfig;
  /** Circuit breakers, merged lists' per-backend deadline, readiness (env `BREAKER_…`, `READINESS_…`, files `breaker`, `readiness`; server/resilience-config.ts). */
  resilience: ResilienceConfig;
}


const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

export { ConfigError };

const int = (value: unknown, setting: string, min: number, max: number): number => numberSetting(value, setting, min, max);

function url(value: unknown, setting: string): string {
  if (typeof value !== 'string') throw new ConfigError(setting, 'must be a URL string');
  let u: URL;
  try {
    u = new URL(value);
  } catch {
    throw new ConfigError(setting, `is not a valid URL (got ${JSON.stringify(value)})`);
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new ConfigError(setting, `must be http or https (got ${u.protocol})`);
  if (u.username || u.password) throw new ConfigError(setting, 'must not carry credentials; use the token setting');
  if (u.search || u.hash) throw new ConfigError(setting, 'must not have a query or fragment');
  return value.replace(/\/+$/, '');
}

/** A Redis URL, checked without ever echoing it (it may carry a password). */
function redisUrl(value: unknown, setting: string): string {
  if (typeof value !== 'string' || value.trim() === '') throw new ConfigError(setting, 'must be a URL string, e.g. redis://redis.example.com:6379');
  let u: URL;
  try {
    u = new URL(value.trim());
  } catch {
    throw new ConfigError(setting, 'is not a valid URL (expected redis://[user:password@]host[:port][/db] or rediss://…)');
  }
  if (u.protocol !== 'redis:' && u.protocol !== 'rediss:') throw new ConfigError(setting, `must be redis:// or rediss:// (got ${u.protocol})`);
  if (!u.hostname) throw new ConfigError(setting, 'needs a host');
  if (u.pathname !== '' && u.pathname !== '/' && !/^\/\d{1,2}$/.test(u.pathname)) throw new ConfigError(setting, 'path must be empty or a database number, e.g. /0');
  if (u.search || u.hash) throw new ConfigError(setting, 'must not have a query or fragment');
  return value.trim();
}

function redis(env: NodeJS.ProcessEnv, file: Record<string, unknown>): RedisConfig | undefined {
  const raw = file.redis;
  if (raw !== undefined && raw !== null && (typeof raw !== 'object' || Array.isArray(raw))) throw new ConfigError('redis', 'must be an object like { "url": "redis://host:6379" }');
  const f = (raw ?? {}) as Record<string, unknown>;
  const envUrl = env.REDIS_URL?.trim() ? env.REDIS_URL : undefined;
  if (envUrl === undefined && f.url === undefined) {
    if (raw !== undefined && raw !== null) throw new ConfigError('redis.url', 'is missing');
    return undefined;
  }
  const keyPrefix = env.REDIS_KEY_PREFIX ?? f.keyPrefix ?? 'vg:';
  const prefixSetting = env.REDIS_KEY_PREFIX !== undefined ? 'REDIS_KEY_PREFIX' : 'redis.keyPrefix';
  if (typeof keyPrefix !== 'string' || !/^[\x21-\x7e]{1,64}$/.test(keyPrefix)) throw new ConfigError(prefixSetting, 'must be 1-64 printable characters without spaces');
  return { url: envUrl !== undefined ? redisUrl(envUrl, 'REDIS_URL') : redisUrl(f.url, 'redis.url'), keyPrefix };
}

function backend(raw: Record<string, unknown>, where: string): BackendConfig {
  const id = raw.id;
  if (typeof id !== 'string' || !/^[A-Za-z0-9][A-Za-z0-9_-]{0,62}$/.test(id)) {
    throw new ConfigError(`${where}.id`, 'must be 1-63 letters, digits, "-" or "_", starting with a letter or digit');
  }
  const module = typeof raw.kind === 'string' ? moduleForKind(raw.kind) : undefined;
  if (!module) {
    throw new ConfigError(`${where}.kind`, `unknown backend kind ${JSON.stringify(raw.kind)} (known: ${BACKEND_MODULES.map((m) => m.kind).join(', ')})`);
  }
  if (module.needsUrl && raw.url === undefined) {
    throw new ConfigError(`${where}.url`, `is missing: kind ${module.kind} needs a URL (GATEWAY_BACKENDS entry id=${module.kind}@URL, or "url" in the file)`);
  }
  const common: CommonBackendSettings = {
    id,
    kind: module.kind,
    // A kind that talks no HTTP may go without; one given is checked all the same.
    ...(module.needsUrl || raw.url !== undefined ? { url: url(raw.url, `${where}.url`) } : {}),
    timeoutMs: int(raw.timeoutMs ?? 10_000, `${where}.timeoutMs`, 1, 600_000),
    maxConnections: int(raw.maxConnections ?? 16, `${where}.maxConnections`, 1, 1024),
    readRetries: int(raw.readRetries ?? 2, `${where}.readRetries`, 0, 10),
  };
  return module.parseSettings(raw, common, where);
}

/** A module's own part of a `GATEWAY_BACKENDS` entry: its `envEntry`, or each of its `envSettings` set at its path. */
function kindEnvEntry(module: NonNullable<ReturnType<typeof moduleForKind>>, get: (name: string) => string | undefined): Record<string, unknown> {
  if (module.envEntry) return module.envEntry(get);
  const entry: Record<string, unknown> = {};
  for (const [name, path] of Object.entries(module.envSettings)) {
    const value = get(name);
    if (value === undefined) continue;
    const keys = path.split('.');
    let at = entry;
    for (const k of keys.slice(0, -1)) at = (at[k] ??= {}) as Record<string, unknown>;
    at[keys[keys.length - 1]!] = value;
  }
  return entry;
}

/** The example in a malformed `GATEWAY_BACKENDS` entry's message: the first module's kind. */
const ENTRY_EXAMPLE = `east=${BACKEND_MODULES[0]?.kind ?? 'kind'}@http://10.0.0.1:4646`;

/** Env form of a backend's settings: `GATEWAY_BACKEND_<ID>_<SETTING>` with the id upper-cased, `-` → `_`. */
const envKey = (id: string, setting: string): string => `GATEWAY_BACKEND_${envId(id)}_${setting}`;

/**
 * Backends from the environment:
 * - `GATEWAY_BACKENDS=id=kind[@url],…`, with per-backend `GATEWAY_BACKEND_<ID>_TIMEOUT_MS`,
 *   `_MAX_CONNECTIONS`, `_READ_RETRIES` and the kind's own variables (its module's `envSettings`);
 * - or the kinds' own client variables (a module's `nativeEnv`: `NOMAD_ADDR`, an openrc's `OS_*`),
 *   one backend each.
 */
function backendsFromEnv(env: NodeJS.ProcessEnv): Array<Record<string, unknown>> | undefined {
  const list = env.GATEWAY_BACKENDS?.trim();
  // Set but empty is a mistake (a template's missing value), not a request for the demo.
  if (list === '') throw new ConfigError('GATEWAY_BACKENDS', 'is set but empty: list the backends as id=kind@url,… or unset it');
  if (list) {
    return list.split(',').map((entry, i) => {
      const m = /^\s*([^=\s]+)\s*=\s*([a-z]+)(?:@(\S+))?\s*$/.exec(entry);
      if (!m) throw new ConfigError('GATEWAY_BACKENDS', `entry ${i + 1} (${JSON.stringify(entry)}) must look like id=kind@url, e.g. ${ENTRY_EXAMPLE}`);
      const [, id, kind, u] = m as unknown as [string, string, string, string | undefined];
      const get = (setting: string): string | undefined => env[envKey(id, setting)];
      const module = moduleForKind(kind);
      return {
        id,
        kind,
        url: u,
        timeoutMs: get('TIMEOUT_MS'),
        maxConnections: get('MAX_CONNECTIONS'),
        readRetries: get('READ_RETRIES'),
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
    throw new ConfigError('--config', `cannot read ${path}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
  try {
    const parsed: unknown = JSON.parse(text);
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new Error('top level must be an object');
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
  const rawBackends = backendsFromEnv(env) ?? (file.backends as unknown);
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
    throw new ConfigError('backends', `none is configured, and with NODE_ENV=production the gateway never starts its demo backends: set ${['GATEWAY_BACKENDS (id=kind@url,…)', ...BACKEND_MODULES.flatMap((m) => (m.nativeEnv ? [m.nativeEnv.trigger] : []))].join(', ')} or the config file's "backends"`);
  }
  const logLevel = (env.LOG_LEVEL ?? file.logLevel ?? 'info') as GatewayConfig['logLevel'];
  if (!LOG_LEVELS.includes(logLevel)) throw new ConfigError('LOG_LEVEL', `must be one of ${LOG_LEVELS.join(', ')}`);
  const redisConfig = redis(env, file);
  return {
    port: int(env.PORT ?? file.port ?? 4000, 'PORT', 0, 65535),
    // The demo serves management tokens on its GraphiQL page: loopback unless HOST says otherwise.
    host: String(env.HOST || file.host || (backends.length === 0 ? '127.0.0.1' : '0.0.0.0')),
    logLevel,
    maxConcurrentReads: int(env.MAX_CONCURRENT_READS ?? file.maxConcurrentReads ?? 16, 'MAX_CONCURRENT_READS', 1, 256),
    maxBodyBytes: int(env.MAX_BODY_BYTES ?? file.maxBodyBytes ?? 1_048_576, 'MAX_BODY_BYTES', 1024, 64 * 1_048_576),
    shutdownGraceMs: int(env.SHUTDOWN_GRACE_MS ?? file.shutdownGraceMs ?? 10_000, 'SHUTDOWN_GRACE_MS', 0, 600_000),
    backends,
    http: loadHttpEdgeConfig(env, file),
    limits: limitsConfig(env, file, { demo: backends.length === 0 }),
    ws: loadWsConfig(env, file),
    live: loadLiveConfig(env, file),
    resilience: loadResilienceConfig(env, file),
    ...(redisConfig ? { redis: redisConfig } : {}),
  };
}
