/**
 * Settings of the HTTP edge: header size, per-caller limits, CORS, trusted documents, the API schema's route. Declared
 * once in {@link HTTP_SETTINGS} (env, file `http`); a bad value throws ConfigError naming the
 * setting. docs/configuration.md, section "HTTP edge", lists them.
 */
import { origins } from '../config-values';
import { CSRF_MODES, type CsrfMode } from './csrf';
import {
  boolean,
  ConfigError,
  decimal,
  defaultsOf,
  integer,
  oneOf,
  pickValue,
  readGroup,
  setting,
  settingName,
  STRICT_BOOLEAN,
  text,
  type SettingValues,
} from '../../adapters/contract/settings';
import type { LimitTier } from '../../domain/caller-limiter';
import { TrustedDocuments, TrustedDocumentsError } from './trusted-documents';

type HttpValues = SettingValues<typeof HTTP_SETTINGS>;

/** CORS: off unless `origins` is non-empty. Meanings and defaults: {@link HTTP_SETTINGS}`.cors`. */
export type CorsConfig = HttpValues['cors'];

/** Trusted documents, when switched on. */
export interface TrustedDocumentsConfig {
  /** The loaded list (from `HTTP_SETTINGS.trustedDocuments.path`). */
  documents: TrustedDocuments;
  /** Refuse free-form `query` text even when it is in the list. */
  requireId: boolean;
}

/** The HTTP edge's settings as read; meanings and defaults: {@link HTTP_SETTINGS}. */
export type HttpEdgeConfig = Omit<HttpValues, 'trustedDocuments'> & {
  /** @default undefined: any document is served */
  trustedDocuments?: TrustedDocumentsConfig;
};

/** What callers of `startGateway` may pass: any group or field left out takes its default. */
export interface HttpEdgeOptions {
  maxHeaderBytes?: number;
  headersTimeoutMs?: number;
  requestTimeoutMs?: number;
  maxConnectionsPerAddress?: number;
  trustProxyHops?: number;
  rateLimit?: { caller?: Partial<LimitTier>; address?: Partial<LimitTier>; maxTracked?: number };
  cors?: Partial<CorsConfig>;
  csrfPrevention?: CsrfMode;
  maxBatchSize?: number;
  trustedDocuments?: { documents: TrustedDocuments; requireId?: boolean };
  /** Serve the API schema at `/graphql/schema.graphql`. @default true */
  schemaSdl?: boolean;
}

/** One tier of per-caller limits, with its variables' prefix and its defaults. */
const tier = (env: string, who: string, d: LimitTier) => ({
  requestsPerSecond: setting({
    env: `${env}_RPS`,
    rule: decimal(0, 1_000_000),
    default: d.requestsPerSecond,
    doc: `Sustained requests per second of ${who} (token bucket refill; decimals allowed; 0 = no rate limit).`,
  }),
  burst: setting({
    env: `${env}_BURST`,
    rule: integer(1, 10_000_000),
    default: d.burst,
    doc: `Requests ${who} may send at once above that rate (bucket size).`,
  }),
  maxInFlight: setting({
    env: `${env}_IN_FLIGHT`,
    rule: integer(0, 1_000_000),
    default: d.maxInFlight,
    doc: `Requests of ${who} being served at once (0 = no cap).`,
  }),
});

const strict = boolean(STRICT_BOOLEAN);

/** The `http` group. */
export const HTTP_SETTINGS = {
  maxHeaderBytes: setting({
    env: 'MAX_HEADER_BYTES',
    rule: integer(1024, 1_048_576),
    default: 16_384,
    doc: 'Largest request head (request line and headers) in bytes; 431 above.',
  }),
  headersTimeoutMs: setting({
    env: 'HEADERS_TIMEOUT_MS',
    rule: integer(100, 600_000),
    default: 10_000,
    doc: "Longest time a client may take to send a request head (request line and headers), from its first byte (or the connection's start), ms; then 408 and the connection is closed.",
  }),
  requestTimeoutMs: setting({
    env: 'REQUEST_TIMEOUT_MS',
    rule: integer(100, 3_600_000),
    default: 30_000,
    defaultNote: '30000, at least headersTimeoutMs',
    doc: 'Longest time a client may take to send a whole request, head and body, ms; then 408 and the connection is closed. Bounds receiving only: a response being sent, a graphql-ws socket or a stream is never cut by it. At least headersTimeoutMs.',
  }),
  maxConnectionsPerAddress: setting({
    env: 'MAX_CONNECTIONS_PER_ADDRESS',
    rule: integer(1, 10_000_000),
    default: 1000,
    doc: 'Open TCP connections (plain HTTP and graphql-ws alike) from one peer address (IPv6 by /64); the next is answered 429 TOO_MANY_CONNECTIONS and closed. Not applied with trustProxyHops > 0.',
  }),
  trustProxyHops: setting({
    env: 'TRUST_PROXY_HOPS',
    rule: integer(0, 10),
    default: 0,
    doc: 'Reverse proxies in front of the gateway whose X-Forwarded-For entry is trusted as the client address; with any, peers are taken to be those proxies and exempt from maxConnectionsPerAddress.',
  }),
  rateLimit: {
    caller: tier('RATE_LIMIT_CALLER', 'one caller', { requestsPerSecond: 200, burst: 1000, maxInFlight: 64 }),
    address: tier('RATE_LIMIT_ADDRESS', 'all callers from one client address together', {
      requestsPerSecond: 1000,
      burst: 5000,
      maxInFlight: 256,
    }),
    maxTracked: setting({
      env: 'RATE_LIMIT_MAX_TRACKED',
      rule: integer(100, 10_000_000),
      default: 50_000,
      doc: 'Most callers and addresses tracked at once.',
    }),
  },
  cors: {
    origins: setting({
      env: 'CORS_ORIGINS',
      rule: origins,
      default: [] as string[],
      doc: 'Origins allowed to call from a browser (`https://app.example.com`), or `*` for any; one list with WS_ALLOWED_ORIGINS, for every transport (CORS headers, graphql-ws, SSE and multipart streams). None in either: CORS off. Env: comma-separated.',
    }),
    credentials: setting({
      env: 'CORS_CREDENTIALS',
      rule: strict,
      default: false,
      doc: 'Let browsers send cookies/HTTP auth cross-origin (Access-Control-Allow-Credentials); not with `*`.',
    }),
    maxAgeSeconds: setting({
      env: 'CORS_MAX_AGE_SECONDS',
      rule: integer(0, 86_400),
      default: 600,
      doc: 'How long browsers may cache a preflight answer, in seconds.',
    }),
  },
  csrfPrevention: setting<CsrfMode>({
    env: 'CSRF_PREVENTION',
    rule: oneOf(CSRF_MODES),
    default: 'standard',
    doc: 'CSRF prevention for queries and mutations over HTTP. `standard`: GETs are served (a GET cannot run a mutation, and one without a credential header runs as an anonymous caller); a POST with a simple content-type needs a non-empty `apollo-require-preflight` or `x-apollo-operation-name`, or a credential header. `strict`, behind a proxy that adds credential headers from cookies: a request carrying a credential header, and every POST, needs `content-type: application/json` or one of those two headers. `off`: no check.',
  }),
  maxBatchSize: setting({
    env: 'MAX_BATCH_SIZE',
    rule: integer(0, 1000),
    default: 10,
    doc: "Most operations one HTTP batch (a POST of a JSON array: Apollo's BatchHttpLink) may hold; more is 413 BATCH_TOO_LARGE. 0 turns batching off. Each operation counts against the per-caller limits and gets the limits of a request of its own.",
  }),
  trustedDocuments: {
    path: setting({
      env: 'TRUSTED_DOCUMENTS',
      rule: text({ trim: true, message: 'must be the path of a persisted query manifest' }),
      doc: 'Path of a persisted-operation manifest; with it only listed documents run. None: any document is served.',
    }),
    requireId: setting({
      env: 'TRUSTED_DOCUMENTS_REQUIRE_ID',
      rule: strict,
      default: false,
      doc: 'Refuse free-form `query` text even when it is in the list: clients must name it by id.',
    }),
  },
  schemaSdl: setting({
    env: 'SCHEMA_SDL',
    rule: strict,
    default: true,
    doc: "Serve the API schema's SDL (schema/generated/api.graphql: no Federation directives) at GET /graphql/schema.graphql, whatever INTROSPECTION says, for codegen and schema tools. false: not served (404), for deployments that turn introspection off to keep the schema to themselves.",
  }),
} as const;

const D = defaultsOf(HTTP_SETTINGS);

export const HTTP_EDGE_DEFAULTS: Readonly<HttpEdgeConfig> = Object.freeze({
  maxHeaderBytes: D.maxHeaderBytes,
  headersTimeoutMs: D.headersTimeoutMs,
  requestTimeoutMs: D.requestTimeoutMs,
  maxConnectionsPerAddress: D.maxConnectionsPerAddress,
  trustProxyHops: D.trustProxyHops,
  rateLimit: D.rateLimit,
  cors: D.cors,
  csrfPrevention: D.csrfPrevention,
  maxBatchSize: D.maxBatchSize,
  schemaSdl: D.schemaSdl,
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
    csrfPrevention: o.csrfPrevention ?? d.csrfPrevention,
    maxBatchSize: o.maxBatchSize ?? d.maxBatchSize,
    schemaSdl: o.schemaSdl ?? d.schemaSdl,
    ...(o.trustedDocuments ? { trustedDocuments: { requireId: false, ...o.trustedDocuments } } : {}),
  };
}

/** The edge settings from env and file. @throws ConfigError naming the setting */
export function loadHttpEdgeConfig(env: NodeJS.ProcessEnv, file: Record<string, unknown>): HttpEdgeConfig {
  const src = { env, file: file.http, path: 'http', strict: true };
  const v = readGroup(HTTP_SETTINGS, src);
  if (v.cors.credentials && v.cors.origins.includes('*'))
    throw new ConfigError(
      settingName(HTTP_SETTINGS, 'cors.credentials', src),
      'cannot be true with the origin "*": list the origins (browsers refuse credentials with a wildcard)',
    );
  if (v.trustedDocuments.requireId && v.trustedDocuments.path === undefined) {
    // Asking for ids only without the list would serve every document: an allowlist believed on.
    throw new ConfigError(
      settingName(HTTP_SETTINGS, 'trustedDocuments.requireId', src),
      `is true, but ${HTTP_SETTINGS.trustedDocuments.path.env} (file: http.trustedDocuments.path) is not set: without the list every document is served`,
    );
  }
  let trustedDocuments: TrustedDocumentsConfig | undefined;
  if (v.trustedDocuments.path !== undefined) {
    try {
      trustedDocuments = {
        documents: TrustedDocuments.fromFile(v.trustedDocuments.path),
        requireId: v.trustedDocuments.requireId,
      };
    } catch (err) {
      if (err instanceof TrustedDocumentsError)
        throw new ConfigError(settingName(HTTP_SETTINGS, 'trustedDocuments.path', src), err.message);
      throw err;
    }
  }
  const requestTimeout = pickValue(HTTP_SETTINGS.requestTimeoutMs, 'requestTimeoutMs', src);
  // Not given: the default, raised to the headers timeout. Node refuses a head deadline past the whole request's.
  const requestTimeoutMs =
    requestTimeout.value === undefined || requestTimeout.value === null
      ? Math.max(D.requestTimeoutMs, v.headersTimeoutMs)
      : v.requestTimeoutMs;
  if (requestTimeoutMs < v.headersTimeoutMs)
    throw new ConfigError(requestTimeout.setting, `must be at least the headers timeout (${v.headersTimeoutMs} ms)`);
  return {
    maxHeaderBytes: v.maxHeaderBytes,
    headersTimeoutMs: v.headersTimeoutMs,
    requestTimeoutMs,
    maxConnectionsPerAddress: v.maxConnectionsPerAddress,
    trustProxyHops: v.trustProxyHops,
    rateLimit: v.rateLimit,
    cors: v.cors,
    csrfPrevention: v.csrfPrevention,
    maxBatchSize: v.maxBatchSize,
    schemaSdl: v.schemaSdl,
    ...(trustedDocuments ? { trustedDocuments } : {}),
  };
}
