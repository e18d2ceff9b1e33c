/**
 * Gateway configuration: one schema, read from an optional JSON file and environment variables
 * (environment wins), validated at start. Every error names the setting. docs/configuration.md
 * lists the same settings.
 */
import { readFileSync } from 'node:fs';

/** One configured backend. */
export interface BackendConfig {
  /** Unique id, used in global ids and `filter.backends`: letters, digits, `-`, `_`. */
  id: string;
  /** Backend family. Only `nomad` exists so far. */
  kind: 'nomad';
  /** Base URL, e.g. `https://nomad.example.com:4646`. */
  url: string;
  /**
   * The gateway's own token for this backend. Used only by the gateway's own watchers and
   * probes, never for callers' requests (callers send theirs). @default undefined
   */
  token?: string;
  /** Deadline of one backend call in milliseconds. @default 10000 */
  timeoutMs: number;
  /** Most concurrent connections to this backend. @default 16 */
  maxConnections: number;
  /** Retries of an idempotent read after a connection failure or 502/503/504. @default 2 */
  readRetries: number;
}

export interface GatewayConfig {
  /** TCP port. @default 4000 (env `PORT`) */
  port: number;
  /** Listen address. @default '0.0.0.0' (env `HOST`) */
  host: string;
  /** pino log level. @default 'info' (env `LOG_LEVEL`) */
  logLevel: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
  /** Most backend reads one request's loaders run at once. @default 16 (env `MAX_CONCURRENT_READS`) */
  maxConcurrentReads: number;
  /** Configured backends; empty = demo mode (embedded simulators). */
  backends: BackendConfig[];
  /** Largest accepted request body in bytes. @default 1048576 (env `MAX_BODY_BYTES`) */
  maxBodyBytes: number;
  /** On SIGTERM, how long in-flight requests may take before connections are cut. @default 10000 (env `SHUTDOWN_GRACE_MS`) */
  shutdownGraceMs: number;
}

/** Configuration is wrong; `setting` names the variable or file key. */
export class ConfigError extends Error {
  constructor(
    readonly setting: string,
    message: string,
  ) {
    super(`${setting}: ${message}`);
    this.name = 'ConfigError';
  }
}

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
const KINDS = ['nomad'] as const;

function int(value: unknown, setting: string, min: number, max: number): number {
  const n = typeof value === 'string' && value.trim() !== '' ? Number(value) : value;
  if (typeof n !== 'number' || !Number.isInteger(n) || n < min || n > max) {
    throw new ConfigError(setting, `must be a whole number from ${min} to ${max} (got ${JSON.stringify(value)})`);
  }
  return n;
}

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

function backend(raw: Record<string, unknown>, where: string): BackendConfig {
  const id = raw.id;
  if (typeof id !== 'string' || !/^[A-Za-z0-9][A-Za-z0-9_-]{0,62}$/.test(id)) {
    throw new ConfigError(`${where}.id`, 'must be 1-63 letters, digits, "-" or "_", starting with a letter or digit');
  }
  if (!KINDS.includes(raw.kind as (typeof KINDS)[number])) {
    throw new ConfigError(`${where}.kind`, `unknown backend kind ${JSON.stringify(raw.kind)} (known: ${KINDS.join(', ')})`);
  }
  if (raw.token !== undefined && (typeof raw.token !== 'string' || raw.token.length === 0)) throw new ConfigError(`${where}.token`, 'must be a non-empty string');
  return {
    id,
    kind: raw.kind as BackendConfig['kind'],
    url: url(raw.url, `${where}.url`),
    token: raw.token as string | undefined,
    timeoutMs: int(raw.timeoutMs ?? 10_000, `${where}.timeoutMs`, 1, 600_000),
    maxConnections: int(raw.maxConnections ?? 16, `${where}.maxConnections`, 1, 1024),
    readRetries: int(raw.readRetries ?? 2, `${where}.readRetries`, 0, 10),
  };
}

/** Env form of a backend's settings: `GATEWAY_BACKEND_<ID>_<SETTING>` with the id upper-cased, `-` → `_`. */
const envKey = (id: string, setting: string): string => `GATEWAY_BACKEND_${id.toUpperCase().replace(/-/g, '_')}_${setting}`;

/**
 * Backends from the environment:
 * - `GATEWAY_BACKENDS=id=kind@url,id=kind@url`, with per-backend `GATEWAY_BACKEND_<ID>_TOKEN`,
 *   `_TIMEOUT_MS`, `_MAX_CONNECTIONS`, `_READ_RETRIES`;
 * - or Nomad's own `NOMAD_ADDR` (+ `NOMAD_TOKEN`) for a single backend with id `nomad`.
 */
function backendsFromEnv(env: NodeJS.ProcessEnv): Array<Record<string, unknown>> | undefined {
  const list = env.GATEWAY_BACKENDS?.trim();
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
      };
    });
  }
  if (env.NOMAD_ADDR?.trim()) return [{ id: 'nomad', kind: 'nomad', url: env.NOMAD_ADDR.trim(), token: env.NOMAD_TOKEN || undefined }];
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
  const logLevel = (env.LOG_LEVEL ?? file.logLevel ?? 'info') as GatewayConfig['logLevel'];
  if (!LOG_LEVELS.includes(logLevel)) throw new ConfigError('LOG_LEVEL', `must be one of ${LOG_LEVELS.join(', ')}`);
  return {
    port: int(env.PORT ?? file.port ?? 4000, 'PORT', 0, 65535),
    host: String(env.HOST ?? file.host ?? '0.0.0.0'),
    logLevel,
    maxConcurrentReads: int(env.MAX_CONCURRENT_READS ?? file.maxConcurrentReads ?? 16, 'MAX_CONCURRENT_READS', 1, 256),
    maxBodyBytes: int(env.MAX_BODY_BYTES ?? file.maxBodyBytes ?? 1_048_576, 'MAX_BODY_BYTES', 1024, 64 * 1_048_576),
    shutdownGraceMs: int(env.SHUTDOWN_GRACE_MS ?? file.shutdownGraceMs ?? 10_000, 'SHUTDOWN_GRACE_MS', 0, 600_000),
    backends,
  };
}
