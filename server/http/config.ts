/**
 * Settings of the HTTP edge: header size, per-caller limits, CORS, trusted documents. Read from
 * the environment and the config file's `http` object (environment wins), validated like
 * server/config.ts: a bad value throws ConfigError naming the setting. docs/configuration.md,
 * section "HTTP edge", lists them.
 */
import { booleanSetting, ConfigError, numberSetting, originList, STRICT_BOOLEAN } from '../config-values';
import type { LimitTier } from './caller-limiter';
import { TrustedDocuments, TrustedDocumentsError } from './trusted-documents';

/** CORS: off unless `origins` is non-empty. */
export interface CorsConfig {
  /** Origins allowed to call from a browser (`https://app.example.com`), or `['*']` for any. @default [] (CORS off) (env `CORS_ORIGINS`, comma-separated) */
  origins: string[];
  /** Let browsers send cookies/HTTP auth cross-origin (`Access-Control-Allow-Credentials`); not with `*`. @default false (env `CORS_CREDENTIALS`) */
  credentials: boolean;
  /** How long browsers may cache a preflight answer, in seconds. @default 600 (env `CORS_MAX_AGE_SECONDS`) */
  maxAgeSeconds: number;
}

/** Per-caller limits (server/http/caller-limiter.ts); a 0 turns that limit off. */
export interface RateLimitConfig {
  /** @default { requestsPerSecond: 200, burst: 1000, maxInFlight: 64 } (env `RATE_LIMIT_CALLER_RPS`, `_BURST`, `_IN_FLIGHT`) */
  caller: LimitTier;
  /** All callers from one address together. @default { requestsPerSecond: 1000, burst: 5000, maxInFlight: 256 } (env `RATE_LIMIT_ADDRESS_RPS`, `_BURST`, `_IN_FLIGHT`) */
  address: LimitTier;
  /** Most callers and addresses tracked at once. @default 50000 (env `RATE_LIMIT_MAX_TRACKED`) */
  maxTracked: number;
}

/** Trusted documents, when switched on. */
export interface TrustedDocumentsConfig {
  /** The loaded list. (env `TRUSTED_DOCUMENTS`: path of the manifest) */
  documents: TrustedDocuments;
  /** Refuse free-form `query` text even when it is in the list. @default false (env `TRUSTED_DOCUMENTS_REQUIRE_ID`) */
  requireId: boolean;
}

export interface HttpEdgeConfig {
  /** Largest request head (request line and headers) in bytes; 431 above. @default 16384 (env `MAX_HEADER_BYTES`) */
  maxHeaderBytes: number;
  /**
   * Longest time a client may take to send a request head (request line and headers), from its
   * first byte (or the connection's start); then 408 and the connection is closed.
   * @default 10000 (env `HEADERS_TIMEOUT_MS`)
   */
  headersTimeoutMs: number;
  /**
   * Longest time a client may take to send a whole request, head and body; then 408 and the
   * connection is closed. Bounds receiving only: a response being sent, a graphql-ws socket or a
   * stream is never cut by it. At least `headersTimeoutMs`. @default 30000 (env `REQUEST_TIMEOUT_MS`)
   */
  requestTimeoutMs: number;
  /**
   * Open TCP connections (plain HTTP and graphql-ws alike) from one peer address (IPv6 by /64);
   * the next is answered 429 TOO_MANY_CONNECTIONS and closed. Not applied with
   * `trustProxyHops` > 0: every peer is then a trusted proxy. @default 1000 (env `MAX_CONNECTIONS_PER_ADDRESS`)
   */
  maxConnectionsPerAddress: number;
  /**
   * Reverse proxies in front of the gateway whose `X-Forwarded-For` entry is trusted as the client
   * address; with any, peers are taken to be those proxies and exempt from `maxConnectionsPerAddress`.
   * @default 0 (env `TRUST_PROXY_HOPS`)
   */
  trustProxyHops: number;
  rateLimit: RateLimitConfig;
  cors: CorsConfig;
  /** @default undefined: any document is served */
  trustedDocuments?: TrustedDocumentsConfig;
}

/** What callers of `startGateway` may pass: any group or field left out takes its default. */
export interface HttpEdgeOptions {
  maxHeaderBytes?: number;
  headersTimeoutMs?: number;
  requestTimeoutMs?: number;
  maxConnectionsPerAddress?: number;
  trustProxyHops?: number;
  rateLimit?: { caller?: Partial<LimitTier>; address?: Partial<LimitTier>; maxTracked?: number };
  cors?: Partial<CorsConfig>;
  trustedDocuments?: { documents: TrustedDocuments; requireId?: boolean };
}

export const HTTP_EDGE_DEFAULTS: Readonly<HttpEdgeConfig> = Object.freeze({
  maxHeaderBytes: 16_384,
  headersTimeoutMs: 10_000,
  requestTimeoutMs: 30_000,
  maxConnectionsPerAddress: 1000,
  trustProxyHops: 0,
  rateLimit: { caller: { requestsPerSecond: 200, burst: 1000, maxInFlight: 64 }, address: { requestsPerSecond: 1000, burst: 5000, maxInFlight: 256 }, maxTracked: 50_000 },
  cors: { origins: [], credentials: false, maxAgeSeconds: 600 },
});

/** Defaults filled in. */
export function resolveHttpEdgeOptions(o: HttpEdgeOptions = {}): HttpEdgeConfig {
  const d = HTTP_EDGE_DEFAULTS;
  return {
    maxHeaderBytes: o.maxHeaderBytes ?? d.maxHeaderBytes,
    headersTimeoutMs: o.headersTimeoutMs ?? d.headersTimeoutMs,
    requestTimeoutMs: o.requestTimeoutMs ?? Math.max(d.requestTimeoutMs, o.headersTimeoutMs ?? 0),
    maxConnectionsPerAddress: o.maxConnectionsPerAddress ?? d.maxConnectionsPerAddress,
    trustProxyHops: o.trustProxyHops ?? d.trustProxyHops,
    rateLimit: {
      caller: { ...d.rateLimit.caller, ...o.rateLimit?.caller },
      address: { ...d.rateLimit.address, ...o.rateLimit?.address },
      maxTracked: o.rateLimit?.maxTracked ?? d.rateLimit.maxTracked,
    },
    cors: { ...d.cors, ...o.cors },
    ...(o.trustedDocuments ? { trustedDocuments: { requireId: false, ...o.trustedDocuments } } : {}),
  };
}

type Source = { env: NodeJS.ProcessEnv; file: Record<string, unknown> };

/** The raw value of a setting and the name to blame: env wins over the file key (dotted path under `http`). */
function pick({ env, file }: Source, envName: string, path: string): { value: unknown; setting: string } {
  if (env[envName] !== undefined && env[envName] !== '') return { value: env[envName], setting: envName };
  let v: unknown = file;
  for (const k of `http.${path}`.split('.')) v = typeof v === 'object' && v !== null ? (v as Record<string, unknown>)[k] : undefined;
  return { value: v, setting: `http.${path}` };
}

function num(s: Source, envName: string, path: string, dflt: number, min: number, max: number, integer = true): number {
  const { value, setting } = pick(s, envName, path);
  return value === undefined ? dflt : numberSetting(value, setting, min, max, integer);
}

function bool(s: Source, envName: string, path: string, dflt: boolean): boolean {
  const { value, setting } = pick(s, envName, path);
  return value === undefined ? dflt : booleanSetting(value, setting, STRICT_BOOLEAN);
}

function tier(s: Source, name: 'caller' | 'address', d: LimitTier): LimitTier {
  const E = `RATE_LIMIT_${name.toUpperCase()}`;
  const p = `rateLimit.${name}`;
  return {
    requestsPerSecond: num(s, `${E}_RPS`, `${p}.requestsPerSecond`, d.requestsPerSecond, 0, 1_000_000, false),
    burst: num(s, `${E}_BURST`, `${p}.burst`, d.burst, 1, 10_000_000),
    maxInFlight: num(s, `${E}_IN_FLIGHT`, `${p}.maxInFlight`, d.maxInFlight, 0, 1_000_000),
  };
}

function origins(s: Source): string[] {
  const { value, setting } = pick(s, 'CORS_ORIGINS', 'cors.origins');
  return value === undefined ? [] : originList(value, setting);
}

/** The edge settings from env and file. @throws ConfigError naming the setting */
export function loadHttpEdgeConfig(env: NodeJS.ProcessEnv, file: Record<string, unknown>): HttpEdgeConfig {
  if (file.http !== undefined && (typeof file.http !== 'object' || file.http === null || Array.isArray(file.http))) throw new ConfigError('http', 'must be an object');
  const s: Source = { env, file };
  const d = HTTP_EDGE_DEFAULTS;
  const cors: CorsConfig = { origins: origins(s), credentials: bool(s, 'CORS_CREDENTIALS', 'cors.credentials', d.cors.credentials), maxAgeSeconds: num(s, 'CORS_MAX_AGE_SECONDS', 'cors.maxAgeSeconds', d.cors.maxAgeSeconds, 0, 86_400) };
  if (cors.credentials && cors.origins.includes('*')) throw new ConfigError('CORS_CREDENTIALS', 'cannot be true with the origin "*": list the origins (browsers refuse credentials with a wildcard)');
  const trusted = pick(s, 'TRUSTED_DOCUMENTS', 'trustedDocuments.path');
  let trustedDocuments: TrustedDocumentsConfig | undefined;
  if (trusted.value !== undefined) {
    if (typeof trusted.value !== 'string' || trusted.value.trim() === '') throw new ConfigError(trusted.setting, 'must be the path of a persisted query manifest');
    try {
      trustedDocuments = { documents: TrustedDocuments.fromFile(trusted.value.trim()), requireId: bool(s, 'TRUSTED_DOCUMENTS_REQUIRE_ID', 'trustedDocuments.requireId', false) };
    } catch (err) {
      if (err instanceof TrustedDocumentsError) throw new ConfigError(trusted.setting, err.message);
      throw err;
    }
  }
  const headersTimeoutMs = num(s, 'HEADERS_TIMEOUT_MS', 'headersTimeoutMs', d.headersTimeoutMs, 100, 600_000);
  const requestTimeout = pick(s, 'REQUEST_TIMEOUT_MS', 'requestTimeoutMs');
  const requestTimeoutMs = num(s, 'REQUEST_TIMEOUT_MS', 'requestTimeoutMs', Math.max(d.requestTimeoutMs, headersTimeoutMs), 100, 3_600_000);
  // Node refuses a head deadline past the whole request's.
  if (requestTimeoutMs < headersTimeoutMs) throw new ConfigError(requestTimeout.setting, `must be at least the headers timeout (${headersTimeoutMs} ms)`);
  return {
    maxHeaderBytes: num(s, 'MAX_HEADER_BYTES', 'maxHeaderBytes', d.maxHeaderBytes, 1024, 1_048_576),
    headersTimeoutMs,
    requestTimeoutMs,
    maxConnectionsPerAddress: num(s, 'MAX_CONNECTIONS_PER_ADDRESS', 'maxConnectionsPerAddress', d.maxConnectionsPerAddress, 1, 10_000_000),
    trustProxyHops: num(s, 'TRUST_PROXY_HOPS', 'trustProxyHops', d.trustProxyHops, 0, 10),
    rateLimit: { caller: tier(s, 'caller', d.rateLimit.caller), address: tier(s, 'address', d.rateLimit.address), maxTracked: num(s, 'RATE_LIMIT_MAX_TRACKED', 'rateLimit.maxTracked', d.rateLimit.maxTracked, 100, 10_000_000) },
    cors,
    ...(trustedDocuments ? { trustedDocuments } : {}),
  };
}
