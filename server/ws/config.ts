/**
 * Settings of the graphql-ws transport (server/ws/): upgrade checks, socket limits, keep-alive.
 * Declared once in {@link WS_SETTINGS} (env `WS_…`, file `ws`); docs/configuration.md, section
 * "WebSocket (graphql-ws)", lists them.
 */
import { BUDGET_DEFAULTS } from '../../subscriptions/live';
import { origins } from '../config-values';
import { defaultsOf, integer, readGroup, setting, type SettingValues } from '../../adapters/contract/settings';

/**
 * 8 MiB: eight queues at the per-queue bound. Readers that keep up hold nothing once a turn's
 * writes went out (400 SSE readers of one address under bursts of 80 events of 8 KB: 0 bytes after
 * each turn, none cut), so only consumers that fall behind count, and several of one address (one
 * NAT, one router) may do so at once; without it 400 paused SSE streams held +490 MiB
 * (docs/reliability.md, R14; docs/subscriptions.md, "What one address can hold").
 */
const DEFAULT_MAX_BUFFERED_BYTES_PER_ADDRESS = 8 * 1_048_576;

/** The `ws` group. */
export const WS_SETTINGS = {
  allowedOrigins: setting({
    env: 'WS_ALLOWED_ORIGINS',
    rule: origins,
    default: [] as string[],
    doc: "Browser origins allowed besides the gateway's own (same host and port), or `*` for any; one list with CORS_ORIGINS, for every transport (graphql-ws, SSE and multipart streams, CORS headers). Requests without `Origin` (non-browser clients) are always allowed; any other browser origin is refused with HTTP 403 before the upgrade or the stream (cross-site WebSocket hijacking). Env: comma-separated.",
  }),
  maxPayloadBytes: setting({
    env: 'WS_MAX_PAYLOAD_BYTES',
    rule: integer(1024, 64 * 1_048_576),
    default: 65_536,
    doc: 'Largest incoming message in bytes; a larger one closes the socket with 1009.',
  }),
  maxConnectionsPerAddress: setting({
    env: 'WS_MAX_CONNECTIONS_PER_ADDRESS',
    rule: integer(1, 1_000_000),
    default: 100,
    doc: 'Open sockets from one client address (IPv6 by /64); the next upgrade gets HTTP 429.',
  }),
  maxConnections: setting({
    env: 'WS_MAX_CONNECTIONS',
    rule: integer(1, 10_000_000),
    default: 10_000,
    doc: 'Open sockets in all; the next upgrade gets HTTP 503.',
  }),
  maxSubscriptionsPerSocket: setting({
    env: 'WS_MAX_SUBSCRIPTIONS_PER_SOCKET',
    rule: integer(1, 100_000),
    default: 100,
    doc: 'Subscriptions open at once on one socket; the next gets an `error` SUBSCRIPTION_LIMIT.',
  }),
  maxSubscriptionsPerCredential: setting({
    env: 'WS_MAX_SUBSCRIPTIONS_PER_CREDENTIAL',
    rule: integer(1, 10_000_000),
    default: BUDGET_DEFAULTS.maxPerCredential,
    doc: 'Subscriptions open at once with the same credentials, across sockets.',
  }),
  maxBufferedBytes: setting({
    env: 'WS_MAX_BUFFERED_BYTES',
    rule: integer(1024, 1024 * 1_048_576),
    default: 1_048_576,
    doc: 'Bytes queued for one socket or HTTP stream (SSE, multipart) beyond which it is closed as a slow consumer (4413; a stream is cut).',
  }),
  maxBufferedBytesPerAddress: setting({
    env: 'WS_MAX_BUFFERED_BYTES_PER_ADDRESS',
    rule: integer(1024, 64 * 1024 * 1_048_576),
    default: DEFAULT_MAX_BUFFERED_BYTES_PER_ADDRESS,
    doc: "Bytes queued for one client address (IPv6 by /64) across its sockets and HTTP streams; past it the address's largest queue is closed as a slow consumer (4413; a stream is cut), then the next, until it is back within.",
  }),
  keepAliveMs: setting({
    env: 'WS_KEEPALIVE_MS',
    rule: integer(0, 3_600_000),
    default: 30_000,
    doc: 'Interval of WebSocket pings; a socket that has not answered the previous one is cut. 0 = off.',
  }),
  connectionInitTimeoutMs: setting({
    env: 'WS_CONNECTION_INIT_TIMEOUT_MS',
    rule: integer(100, 600_000),
    default: 10_000,
    doc: 'Time a client has to send `connection_init` after the upgrade (then 4408), ms.',
  }),
  maxInitPayloadBytes: setting({
    env: 'WS_MAX_INIT_PAYLOAD_BYTES',
    rule: integer(256, 1_048_576),
    default: 16_384,
    doc: 'Largest `connection_init` payload (its JSON) in bytes (then 4403).',
  }),
} as const;

/** The graphql-ws settings as read; each key's meaning and default are in {@link WS_SETTINGS}. */
export type WsConfig = SettingValues<typeof WS_SETTINGS>;

export const WS_DEFAULTS: Readonly<WsConfig> = Object.freeze(defaultsOf(WS_SETTINGS));

/** What callers of `startGateway` may pass: any field left out takes its default. */
export type WsOptions = Partial<WsConfig>;

export function resolveWsOptions(o: WsOptions = {}): WsConfig {
  return { ...WS_DEFAULTS, ...o };
}

/** The `ws` group from the environment and the file's `ws` object. @throws ConfigError naming the setting */
export function loadWsConfig(env: NodeJS.ProcessEnv, file: Record<string, unknown>): WsConfig {
  return readGroup(WS_SETTINGS, { env, file: file.ws, path: 'ws', strict: true });
}
