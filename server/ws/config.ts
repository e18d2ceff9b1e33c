/**
 * Settings of the graphql-ws transport (server/ws/): upgrade checks, socket limits, keep-alive.
 * Read from the environment (wins) and the config file's `ws` object, validated like
 * server/config.ts: a bad value throws ConfigError naming the setting. docs/configuration.md,
 * section "WebSocket (graphql-ws)", lists them.
 */
import { numberGroup, originList, type NumberSettingSpec } from '../config-values';

export interface WsConfig {
  /**
   * Browser origins allowed to open a socket besides the gateway's own (same host and port), or
   * `['*']` for any. Requests without `Origin` (non-browser clients) are always allowed; any
   * other browser origin is refused with HTTP 403 before the upgrade (cross-site WebSocket
   * hijacking). @default [] (env `WS_ALLOWED_ORIGINS`, comma-separated)
   */
  allowedOrigins: string[];
  /** Largest incoming message in bytes; a larger one closes the socket with 1009. @default 65536 (env `WS_MAX_PAYLOAD_BYTES`) */
  maxPayloadBytes: number;
  /** Open sockets from one client address (IPv6 by /64); the next upgrade gets HTTP 429. @default 100 (env `WS_MAX_CONNECTIONS_PER_ADDRESS`) */
  maxConnectionsPerAddress: number;
  /** Open sockets in all; the next upgrade gets HTTP 503. @default 10000 (env `WS_MAX_CONNECTIONS`) */
  maxConnections: number;
  /** Subscriptions open at once on one socket; the next gets an `error` SUBSCRIPTION_LIMIT. @default 100 (env `WS_MAX_SUBSCRIPTIONS_PER_SOCKET`) */
  maxSubscriptionsPerSocket: number;
  /** Subscriptions open at once with the same credentials, across sockets. @default 500 (env `WS_MAX_SUBSCRIPTIONS_PER_CREDENTIAL`) */
  maxSubscriptionsPerCredential: number;
  /** Bytes queued for one socket beyond which it is closed as a slow consumer (4413). @default 1048576 (env `WS_MAX_BUFFERED_BYTES`) */
  maxBufferedBytes: number;
  /** Interval of WebSocket pings; a socket that has not answered the previous one is cut. 0 = off. @default 30000 (env `WS_KEEPALIVE_MS`) */
  keepAliveMs: number;
  /** Time a client has to send `connection_init` after the upgrade (then 4408). @default 10000 (env `WS_CONNECTION_INIT_TIMEOUT_MS`) */
  connectionInitTimeoutMs: number;
  /** Largest `connection_init` payload (its JSON) in bytes (then 4403). @default 16384 (env `WS_MAX_INIT_PAYLOAD_BYTES`) */
  maxInitPayloadBytes: number;
}

export const WS_DEFAULTS: Readonly<WsConfig> = Object.freeze({
  allowedOrigins: [],
  maxPayloadBytes: 65_536,
  maxConnectionsPerAddress: 100,
  maxConnections: 10_000,
  maxSubscriptionsPerSocket: 100,
  maxSubscriptionsPerCredential: 500,
  maxBufferedBytes: 1_048_576,
  keepAliveMs: 30_000,
  connectionInitTimeoutMs: 10_000,
  maxInitPayloadBytes: 16_384,
});

/** What callers of `startGateway` may pass: any field left out takes its default. */
export type WsOptions = Partial<WsConfig>;

export function resolveWsOptions(o: WsOptions = {}): WsConfig {
  return { ...WS_DEFAULTS, ...o };
}

/** Each numeric setting: key, env name, bounds. */
const NUMBERS: ReadonlyArray<NumberSettingSpec<Exclude<keyof WsConfig, 'allowedOrigins'>>> = [
  ['maxPayloadBytes', 'WS_MAX_PAYLOAD_BYTES', 1024, 64 * 1_048_576],
  ['maxConnectionsPerAddress', 'WS_MAX_CONNECTIONS_PER_ADDRESS', 1, 1_000_000],
  ['maxConnections', 'WS_MAX_CONNECTIONS', 1, 10_000_000],
  ['maxSubscriptionsPerSocket', 'WS_MAX_SUBSCRIPTIONS_PER_SOCKET', 1, 100_000],
  ['maxSubscriptionsPerCredential', 'WS_MAX_SUBSCRIPTIONS_PER_CREDENTIAL', 1, 10_000_000],
  ['maxBufferedBytes', 'WS_MAX_BUFFERED_BYTES', 1024, 1024 * 1_048_576],
  ['keepAliveMs', 'WS_KEEPALIVE_MS', 0, 3_600_000],
  ['connectionInitTimeoutMs', 'WS_CONNECTION_INIT_TIMEOUT_MS', 100, 600_000],
  ['maxInitPayloadBytes', 'WS_MAX_INIT_PAYLOAD_BYTES', 256, 1_048_576],
];

/** The `ws` group from the environment and the file's `ws` object. @throws ConfigError naming the setting */
export function loadWsConfig(env: NodeJS.ProcessEnv, file: Record<string, unknown>): WsConfig {
  const { values: out, raw: f } = numberGroup(env, file, 'ws', NUMBERS, { ...WS_DEFAULTS }, ['allowedOrigins']);
  const envOrigins = env.WS_ALLOWED_ORIGINS?.trim() ? env.WS_ALLOWED_ORIGINS : undefined;
  const rawOrigins = envOrigins ?? f.allowedOrigins;
  const setting = envOrigins !== undefined ? 'WS_ALLOWED_ORIGINS' : 'ws.allowedOrigins';
  if (rawOrigins !== undefined) out.allowedOrigins = originList(rawOrigins, setting);
  return out;
}
