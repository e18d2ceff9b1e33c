/**
 * Gateway configuration: one schema, read from an optional JSON file and environment variables
 * (environment wins), validated at start. Every error names the setting. docs/configuration.md
 * lists the same settings.
 */
import { readFileSync } from 'node:fs';
import { ConfigError, numberSetting } from './config-values';
import { checkSettingNames, envId } from './config-names';
import type { ServiceAuth } from '../adapters/openstack/keystone';
import { loadHttpEdgeConfig, type HttpEdgeConfig } from './http/config';
import { limitsConfig, type LimitsConfig } from './limits/config';
import { loadWsConfig, type WsConfig } from './ws/config';
import { loadLiveConfig, type LiveConfig } from './live-config';
import { loadResilienceConfig, type ResilienceConfig } from './resilience-config';

/** One configured backend: a Nomad cluster or an OpenStack region. */
export type BackendConfig = NomadBackendConfig | OpenStackBackendConfig;

interface CommonBackendConfig {
  /** Unique id, used in global ids and `filter.backends`: letters, digits, `-`, `_`. */
  id: string;
  /** Deadline of one backend call in milliseconds. @default 10000 */
  timeoutMs: number;
  /** Most concurrent connections to this backend (per origin). @default 16 */
  maxConnections: number;
  /** Retries of an idempotent read after a connection failure or 502/503/504. @default 2 */
  readRetries: number;
}

/** An OpenStack region: Keystone v3 finds Cinder and Nova in the catalog. */
export interface OpenStackBackendConfig extends CommonBackendConfig {
  kind: 'openstack';
  /** Keystone v3 URL, e.g. `https://keystone.example.com:5000/v3`. */
  url: string;
  /** Region of the endpoints to use. @default 'RegionOne' */
  region: string;
  /** Catalog interface. @default 'public' */
  interface: 'public' | 'internal' | 'admin';
  /** The gateway's own credential, for probes and watchers only (callers send their tokens). @default none */
  auth?: ServiceAuth;
  /** Longest an asynchronous change (attach, extend …) may take before its operation is TIMED_OUT. @default 120000 */
  operationTimeoutMs: number;
  /** Watcher poll interval while a volume is in motion or an operation is pending (ms). @default 500 */
  watchFastMs?: number;
  /** Watcher poll interval otherwise, while anyone listens (ms); at least `watchFastMs`. @default 10000 */
  watchSlowMs?: number;
}

export interface NomadBackendConfig extends CommonBackendConfig {
  kind: 'nomad';
  /** Base URL, e.g. `https://nomad.example.com:4646`. */
  url: string;
  /**
   * The gateway's own token for this backend. Used only by the gateway's own watchers and
   * probes, never for callers' requests (callers send theirs). @default undefined
   */
  token?: string;
}

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

/** A Redis server shared by the replicas (file key `redis`). */
export interface RedisConfig {
  /**
   * `redis://[user:password@]host[:port][/db]` or `rediss://…` (TLS). May carry a password, so it
   * is never logged or echoed in errors. (env `REDIS_URL`, file `redis.url`)
   */
  url: string;
  /** Prefix of every key the gateway writes; replicas sharing records use the same one. @default 'vg:' (env `REDIS_KEY_PREFIX`, file `redis.keyPrefix`) */
  keyPrefix: string;
}


const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
const KINDS = ['nomad', 'openstack'] as const;

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
  if (!KINDS.includes(raw.kind as (typeof KINDS)[number])) {
    throw new ConfigError(`${where}.kind`, `unknown backend kind ${JSON.stringify(raw.kind)} (known: ${KINDS.join(', ')})`);
  }
  const common = {
    id,
    url: url(raw.url, `${where}.url`),
    timeoutMs: int(raw.timeoutMs ?? 10_000, `${where}.timeoutMs`, 1, 600_000),
    maxConnections: int(raw.maxConnections ?? 16, `${where}.maxConnections`, 1, 1024),
    readRetries: int(raw.readRetries ?? 2, `${where}.readRetries`, 0, 10),
  };
  if (raw.kind === 'openstack') {
    const iface = raw.interface ?? 'public';
    if (iface !== 'public' && iface !== 'internal' && iface !== 'admin') throw new ConfigError(`${where}.interface`, 'must be public, internal or admin');
    if (raw.region !== undefined && (typeof raw.region !== 'string' || raw.region.length === 0)) throw new ConfigError(`${where}.region`, 'must be a non-empty string');
    const watchFastMs = int(raw.watchFastMs ?? 500, `${where}.watchFastMs`, 50, 60_000);
    const watchSlowMs = int(raw.watchSlowMs ?? Math.max(10_000, watchFastMs), `${where}.watchSlowMs`, 50, 3_600_000);
    if (watchSlowMs < watchFastMs) throw new ConfigError(`${where}.watchSlowMs`, `must be at least watchFastMs (${watchFastMs})`);
    return {
      ...common,
      kind: 'openstack',
      region: (raw.region as string | undefined) ?? 'RegionOne',
      interface: iface,
      auth: serviceAuth(raw.auth, `${where}.auth`),
      operationTimeoutMs: int(raw.operationTimeoutMs ?? 120_000, `${where}.operationTimeoutMs`, 1000, 3_600_000),
      watchFastMs,
      watchSlowMs,
    };
  }
  if (raw.token !== undefined && (typeof raw.token !== 'string' || raw.token.length === 0)) throw new ConfigError(`${where}.token`, 'must be a non-empty string');
  return { ...common, kind: 'nomad', token: raw.token as string | undefined };
}

/** The gateway's own OpenStack credential: complete or absent, never half given. */
function serviceAuth(raw: unknown, where: string): ServiceAuth | undefined {
  if (raw === undefined || raw === null) return undefined;
  if (typeof raw !== 'object') throw new ConfigError(where, 'must be an object');
  const a = raw as Record<string, unknown>;
  const need = (key: string): string => {
    const v = a[key];
    if (typeof v !== 'string' || v.length === 0) throw new ConfigError(`${where}.${key}`, 'is missing (a non-empty string is required)');
    return v;
  };
  const opt = (key: string): string | undefined => (typeof a[key] === 'string' && a[key] !== '' ? (a[key] as string) : undefined);
  if (a.method === 'password') {
    return { method: 'password', username: need('username'), password: need('password'), projectName: need('projectName'), userDomainName: opt('userDomainName'), projectDomainName: opt('projectDomainName') };
  }
  if (a.method === 'applicationCredential') return { method: 'applicationCredential', id: need('id'), secret: need('secret') };
  throw new ConfigError(`${where}.method`, 'must be "password" or "applicationCredential"');
}

/** OpenStack service credential from `GATEWAY_BACKEND_<ID>_*` or `OS_*` variables. */
function authFromEnv(get: (setting: string) => string | undefined): Record<string, unknown> | undefined {
  if (get('APPLICATION_CREDENTIAL_ID') || get('APPLICATION_CREDENTIAL_SECRET')) {
    return { method: 'applicationCredential', id: get('APPLICATION_CREDENTIAL_ID'), secret: get('APPLICATION_CREDENTIAL_SECRET') };
  }
  if (get('USERNAME') || get('PASSWORD') || get('PROJECT_NAME')) {
    return { method: 'password', username: get('USERNAME'), password: get('PASSWORD'), projectName: get('PROJECT_NAME'), userDomainName: get('USER_DOMAIN_NAME'), projectDomainName: get('PROJECT_DOMAIN_NAME') };
  }
  return undefined;
}

/** Env form of a backend's settings: `GATEWAY_BACKEND_<ID>_<SETTING>` with the id upper-cased, `-` → `_`. */
const envKey = (id: string, setting: string): string => `GATEWAY_BACKEND_${envId(id)}_${setting}`;

/**
 * Backends from the environment:
 * - `GATEWAY_BACKENDS=id=kind@url,id=kind@url`, with per-backend `GATEWAY_BACKEND_<ID>_TOKEN`,
 *   `_TIMEOUT_MS`, `_MAX_CONNECTIONS`, `_READ_RETRIES`;
 * - or Nomad's own `NOMAD_ADDR` (+ `NOMAD_TOKEN`) for a single backend with id `nomad`.
 */
function backendsFromEnv(env: NodeJS.ProcessEnv): Array<Record<string, unknown>> | undefined {
  const list = env.GATEWAY_BACKENDS?.trim();
  // Set but empty is a mistake (a template's missing value), not a request for the demo.
  if (list === '') throw new ConfigError('GATEWAY_BACKENDS', 'is set but empty: list the backends as id=kind@url,… or unset it');
  if (list) {
    return list.split(',').map((entry, i) => {
      const m = /^\s*([^=\s]+)\s*=\s*([a-z]+)@(\S+)\s*$/.exec(entry);
      if (!m) throw new ConfigError('GATEWAY_BACKENDS', `entry ${i + 1} (${JSON.stringify(entry)}) must look like id=kind@url, e.g. east=nomad@http://10.0.0.1:4646`);
      const [, id, kind, u] = m as unknown as [string, string, string, string];
      return {
        id,
        kind,
        url: u,
        token: env[envKey(id, 'TOKEN')],
        timeoutMs: env[envKey(id, 'TIMEOUT_MS')],
        maxConnections: env[envKey(id, 'MAX_CONNECTIONS')],
        readRetries: env[envKey(id, 'READ_RETRIES')],
        region: env[envKey(id, 'REGION')],
        interface: env[envKey(id, 'INTERFACE')],
        operationTimeoutMs: env[envKey(id, 'OPERATION_TIMEOUT_MS')],
        watchFastMs: env[envKey(id, 'WATCH_FAST_MS')],
        watchSlowMs: env[envKey(id, 'WATCH_SLOW_MS')],
        auth: authFromEnv((s) => env[envKey(id, s)] || undefined),
      };
    });
  }
  const fromEnv: Array<Record<string, unknown>> = [];
  if (env.NOMAD_ADDR?.trim()) fromEnv.push({ id: 'nomad', kind: 'nomad', url: env.NOMAD_ADDR.trim(), token: env.NOMAD_TOKEN || undefined });
  // The OpenStack clients' own variables (an openrc file) configure one backend `openstack`.
  if (env.OS_AUTH_URL?.trim()) {
    fromEnv.push({
      id: 'openstack',
      kind: 'openstack',
      url: env.OS_AUTH_URL.trim(),
      region: env.OS_REGION_NAME || undefined,
      interface: env.OS_INTERFACE || undefined,
      auth: authFromEnv((s) => env[`OS_${s}`] || undefined),
    });
  }
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
    throw new ConfigError('backends', 'none is configured, and with NODE_ENV=production the gateway never starts its demo backends: set GATEWAY_BACKENDS (id=kind@url,…), NOMAD_ADDR, OS_AUTH_URL or the config file\'s "backends"');
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
