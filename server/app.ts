/**
 * The HTTP app: Apollo Server 5 on Node's own http server (through Apollo's
 * `executeHTTPGraphQLRequest`, so health and later websocket routes share the port), plus
 * `/healthz` and `/readyz`. The HTTP edge (routing, bodies, per-caller limits, CORS, trusted
 * documents) lives in server/http/.
 */
import type { GraphQLSchema } from 'graphql';
import { ApolloServer, type GraphQLRequestContextWillSendResponse } from '@apollo/server';
import { ApolloServerPluginLandingPageDisabled } from '@apollo/server/plugin/disabled';
import { ApolloServerPluginInlineTrace } from '@apollo/server/plugin/inlineTrace';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { buildGatewaySchema } from './schema';
import type { GatewayConfig } from './config';
import { createExecutionContext, type GatewayContext, type GatewayServices } from '../domain/context';
import { createHttpContext } from './http-context';
import { createFormatError, unexpectedErrorLog } from './errors';
import { MemoryIdempotencyStore, RedisIdempotencyStore } from './idempotency';
import type { Logger } from './logger';
import type { BackendRegistry } from './registry';
import { OperationTracker, RedisOperationStore, TERMINAL, type OperationTrackerOptions } from '../subscriptions/operations';
import { createGraphiQLHandler, type GraphiQLHandlerOptions } from './graphiql';
import { createLivePageHandler, type LivePageOptions } from './live';
import { GatewayMetrics } from './metrics';
import { observabilityPlugin } from './observability';
import { connectRedis, type GatewayRedis } from './redis';
import { ReadinessState, type ReadinessConfig } from './readiness';
import { CallerLimiter } from './http/caller-limiter';
import { answerClientError } from './http/client-error';
import type { EdgeError } from './http/errors';
import { resolveHttpEdgeOptions, type HttpEdgeOptions } from './http/config';
import { capConnectionsPerAddress } from './http/connection-cap';
import { createCorsPolicy } from './http/cors';
import { createGraphQLHttpHandler } from './http/graphql-handler';
import { createRequestListener } from './http/router';
import { operationLimits, PRE_EXECUTION_CODES } from './limits';
import { apolloLimitOptions } from './limits/apollo';
import { WatcherDirectory } from '../domain/watchers';
import { MemoryEventLog } from '../subscriptions/events';
import { createLiveHub, type LiveHub, type RunningLiveHub } from '../subscriptions/live';
import { LIVE_DEFAULTS, type LiveConfig } from './live-config';
import { createWsTransport, resolveWsOptions, type WsOptions } from './ws';
import { loadOperation } from '../resolvers/operation';

export interface GatewayOptions {
  /**
   * With `redis` (scale-out) the default tracker keeps its records in Redis, idempotency keys are
   * kept there too, `/readyz` reports it, and `stop()` closes the connection after in-flight work.
   * Without it records and keys stay in memory.
   */
  config: Pick<GatewayConfig, 'port' | 'host' | 'maxConcurrentReads' | 'maxBodyBytes'> & Partial<Pick<GatewayConfig, 'shutdownGraceMs' | 'redis'>> & {
    /** HTTP edge settings (server/http/config.ts); any group or field left out takes its default. */
    http?: HttpEdgeOptions;
    /** Operation limits (docs/configuration.md); unset ones take their defaults. */
    limits?: Partial<GatewayConfig['limits']>;
    /** graphql-ws socket settings (server/ws/config.ts); unset ones take their defaults. */
    ws?: WsOptions;
    /** Live-path settings (server/live-config.ts); unset ones take their defaults. */
    live?: Partial<LiveConfig>;
    /** What `/readyz` requires and how often the background probe runs (server/readiness.ts); unset ones take their defaults. */
    readiness?: Partial<ReadinessConfig>;
  };
  registry: BackendRegistry;
  logger: Logger;
  /** Served at `/metrics`; pass the instance the registry's transport reports to. @default a new one */
  metrics?: GatewayMetrics;
  /** Tracks asynchronous mutations. @default a new in-memory tracker reporting to `metrics` */
  operations?: OperationTracker;
  /** Poll settings of the default tracker. */
  operationOptions?: Pick<OperationTrackerOptions, 'pollMs' | 'maxPollMs' | 'defaultTimeoutMs'>;
  /**
   * Feeds graphql-ws subscriptions (same port and path, server/ws/). `stop()` closes it after the
   * sockets. @default a live hub over this gateway's backends and an in-memory event log
   * (`config.events`); `false`: none, every subscription is answered SUBSCRIPTIONS_UNAVAILABLE
   */
  live?: LiveHub | false;
  /** GraphiQL page settings (demo mode pre-fills the demo headers). @default the page's defaults */
  graphiql?: Omit<GraphiQLHandlerOptions, 'endpointPath'>;
  /** Live status page settings, `GET /live` (demo mode pre-fills the demo headers). @default the page's defaults */
  livePage?: Omit<LivePageOptions, 'endpointPath'>;
  /**
   * Whether the background probe feeding `/readyz` runs. Tests that count a simulator's requests
   * turn it off; `/readyz` then shows every backend UNKNOWN. @default true
   */
  readinessProbe?: boolean;
}

export interface RunningGateway {
  /** e.g. `http://127.0.0.1:4000/graphql`. */
  url: string;
  port: number;
  server: Server;
  operations: OperationTracker;
  /** Closes every socket with 1012, stops accepting, finishes in-flight requests, closes the hub and backend pools. */
  stop(): Promise<void>;
}

/** Errors in the GraphQL document or its variables (not in the HTTP request's parameters). */
const DOCUMENT_ERROR_CODES = new Set(['GRAPHQL_PARSE_FAILED', 'GRAPHQL_VALIDATION_FAILED', 'BAD_USER_INPUT', ...PRE_EXECUTION_CODES]);

/** Longest wait for sockets to answer the shutdown's close frame before they are cut (before the HTTP drain). */
export const WS_CLOSE_WAIT_MS = 2_000;

export async function startGateway(o: GatewayOptions): Promise<RunningGateway> {
  const metrics = o.metrics ?? new GatewayMetrics({ processMetrics: false });
  const redis: GatewayRedis | undefined = o.config.redis ? connectRedis(o.config.redis, o.logger) : undefined;
  // The default hub's watchers, registered as it starts them: operations in a scope a current
  // watcher covers are checked with the service credential (no caller token kept), and watch-fed
  // reads are served from its view.
  const watchers = new WatcherDirectory((id) => o.registry.find(id));
  let hub: RunningLiveHub | undefined;
  const operations =
    o.operations ??
    new OperationTracker({
      ...o.operationOptions,
      watchers,
      // The backend that made a change evaluates its completion rule.
      changes: (id) => o.registry.find(id)?.trackedChanges,
      store: redis
        ? new RedisOperationStore({
            client: redis.client,
            keyPrefix: redis.keyPrefix,
            onError: (op, err) => o.logger.warn({ op, err: err instanceof Error ? err.message : String(err) }, 'redis operation store failed; using this replica\'s copy'),
          })
        : undefined,
      onChange: (r, previous) => {
        if (previous === r.state) return;
        metrics.trackedOperations.inc({ kind: r.kind, state: r.state });
        if (previous === null && !TERMINAL.has(r.state)) metrics.trackedOperationsActive.inc({ kind: r.kind });
        if (previous !== null && !TERMINAL.has(previous) && TERMINAL.has(r.state)) metrics.trackedOperationsActive.dec({ kind: r.kind });
        if (TERMINAL.has(r.state)) o.logger.info({ operation: r.id, kind: r.kind, backend: r.backend, state: r.state, failureReason: r.failureReason ?? undefined }, 'operation finished');
      },
      onCheckError: (r, err) => o.logger.warn({ operation: r.id, kind: r.kind, backend: r.backend, err: err instanceof Error ? err.message : String(err) }, 'operation check failed'),
    });
  // Operation limits: parse options, validation rules and the wrapped schema (server/limits).
  const limits = operationLimits(o.config.limits);
  // One schema for direct clients and for a supergraph's router: a Federation 2 subgraph.
  const limited = apolloLimitOptions<GatewayContext>(limits, buildGatewaySchema());
  // Replicas sharing Redis share idempotency keys too, so a retry on another replica finds the first result.
  const idempotency = redis
    ? new RedisIdempotencyStore({
        client: redis.client,
        keyPrefix: redis.keyPrefix,
        onError: (op, err) => o.logger.warn({ op, err: err instanceof Error ? err.message : String(err) }, 'redis idempotency store failed'),
        onRecovery: (r) => o.logger.warn({ restored: r.restored, refusingUntil: r.refusingUntil.toISOString() }, 'redis lost its data: idempotency keys this replica holds were written back; creates with other keys are refused until then'),
      })
    : new MemoryIdempotencyStore();
  const services: GatewayServices = {
    registry: o.registry,
    operations,
    idempotency,
    maxConcurrentReads: o.config.maxConcurrentReads,
    watchers,
  };
  const live: LiveHub | undefined = o.live === false ? undefined : (o.live ?? (hub = defaultLiveHub(o, services, watchers, limited.schema, metrics)));
  if (hub) services.live = hub.mutations;
  const apollo = new ApolloServer<GatewayContext>({
    ...limited,
    formatError: createFormatError(limits.executionGuards.parseErrorReason),
    includeStacktraceInErrorResponses: false,
    // The gateway owns shutdown (server/main.ts): Apollo's own signal handlers would race it.
    stopOnTerminationSignals: false,
    plugins: [
      // Apollo's default landing page loads from a CDN; an air-gapped gateway must not.
      ApolloServerPluginLandingPageDisabled(),
      // A router that asks (apollo-federation-include-trace: ftv1) gets field timings; error texts
      // stay out of them (they may name backend details), as Apollo's default for subgraphs.
      ApolloServerPluginInlineTrace({ includeErrors: { masked: true } }),
      observabilityPlugin(o.logger, metrics, { trustedDocuments: o.config.http?.trustedDocuments?.documents }),
      unexpectedErrorLog(o.logger, limits.executionGuards.parseErrorReason),
      {
        async requestDidStart() {
          return {
            async willSendResponse(rc: GraphQLRequestContextWillSendResponse<GatewayContext>) {
              // GraphQL over HTTP: a client that accepts only application/json (not
              // application/graphql-response+json) gets 200 for parse, validation and variable
              // errors; Apollo would send 400.
              const accept = rc.request.http?.headers.get('accept') ?? '';
              const errors = rc.response.body.kind === 'single' ? rc.response.body.singleResult.errors : undefined;
              if (rc.response.http.status === 400 && !accept.includes('application/graphql-response+json') && errors?.every((e) => DOCUMENT_ERROR_CODES.has(String(e.extensions?.code)))) {
                rc.response.http.status = 200;
              }
            },
          };
        },
      },
      // Last: it sees the errors the plugins above added.
      ...limited.plugins,
    ],
  });
  await apollo.start();

  const http = resolveHttpEdgeOptions(o.config.http);
  const countRefusal = (err: EdgeError): void => metrics.httpRefusals.inc({ code: err.code, status: String(err.status) });
  const handleGraphQL = createGraphQLHttpHandler({
    maxBodyBytes: o.config.maxBodyBytes,
    limiter: new CallerLimiter(http.rateLimit),
    trustProxyHops: http.trustProxyHops,
    trusted: http.trustedDocuments,
    logger: o.logger,
    execute: (httpGraphQLRequest, { req, signal }) =>
      apollo.executeHTTPGraphQLRequest({
        httpGraphQLRequest,
        context: async () => createHttpContext(services, { headers: req.headers, requestId: httpGraphQLRequest.headers.get('x-request-id'), createLimits: () => limits.executionGuards.createExecutionLimits(signal) }),
      }),
  });

  // Fed by background probes; /readyz reads it and never calls a backend itself. Watchers are
  // reported, not required: a backend without one still serves queries.
  const readinessState = new ReadinessState({ registry: o.registry, config: o.config.readiness, redis: redis ? () => redis.health() : undefined, watchers: () => hub?.statuses() ?? [] });
  const readiness = async (): Promise<{ ready: boolean } & Record<string, unknown>> => ({ ...readinessState.report() });
  metrics.observeBreakers(o.registry.breakers);

  const listener = createRequestListener(
    {
      graphiql: createGraphiQLHandler({ ...o.graphiql, endpointPath: '/graphql' }),
      live: createLivePageHandler({ ...o.livePage, endpointPath: '/graphql' }),
      graphql: handleGraphQL,
      readiness,
      metrics: async () => ({ contentType: metrics.registry.contentType, text: await metrics.registry.metrics() }),
    },
    createCorsPolicy(http.cors),
    o.logger,
    countRefusal,
  );
  const server = createServer(
    {
      maxHeaderSize: http.maxHeaderBytes,
      // Bound receiving a request only: Node resets these once a request has arrived, and an
      // upgraded socket leaves the HTTP parser, so responses and graphql-ws sockets are never cut.
      headersTimeout: http.headersTimeoutMs,
      requestTimeout: http.requestTimeoutMs,
      // How often Node looks for expired requests (its default, 30 s, would add up to 30 s to each).
      connectionsCheckingInterval: Math.max(50, Math.min(1_000, Math.floor(http.headersTimeoutMs / 4))),
    },
    listener,
  );
  capConnectionsPerAddress(server, { maxPerAddress: http.maxConnectionsPerAddress, peersAreTrustedProxies: http.trustProxyHops > 0, onRefused: countRefusal });
  // Answer `Expect: 100-continue` ourselves: an oversized body is refused before it is sent.
  server.on('checkContinue', listener);
  server.on('clientError', answerClientError(http.maxHeaderBytes, countRefusal));
  server.keepAliveTimeout = 65_000;
  // graphql-ws on the same port and path (server/ws/).
  const ws = createWsTransport({
    config: resolveWsOptions(o.config.ws),
    path: '/graphql',
    trustProxyHops: http.trustProxyHops,
    schema: limited.schema,
    limits,
    trusted: http.trustedDocuments,
    services,
    hub: live,
    logger: o.logger,
    metrics,
  });
  server.on('upgrade', (req, socket, head) => ws.handleUpgrade(req, socket, head));

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(o.config.port, o.config.host, () => resolve());
  }).catch(async (err: unknown) => {
    await redis?.close();
    throw err;
  });
  const port = (server.address() as AddressInfo).port;
  // Watchers and probes start once the gateway serves: their first reads need no caller.
  hub?.start();
  if (o.readinessProbe !== false) readinessState.start();
  const shownHost = o.config.host === '0.0.0.0' || o.config.host === '::' ? 'localhost' : o.config.host;

  return {
    url: `http://${shownHost}:${port}/graphql`,
    port,
    server,
    operations,
    async stop() {
      // Sockets first, with 1012: clients reconnect (elsewhere) and resume from their cursors.
      await ws.close(Math.min(o.config.shutdownGraceMs ?? 10_000, WS_CLOSE_WAIT_MS));
      // Stop accepting; let in-flight requests finish. Keep-alive sockets turn idle only after
      // their response, so idle ones are closed repeatedly until the server is done, and
      // whatever is left after the grace period is cut.
      await new Promise<void>((resolve) => {
        const sweep = setInterval(() => server.closeIdleConnections(), 50);
        const cut = setTimeout(() => server.closeAllConnections(), o.config.shutdownGraceMs ?? 10_000);
        server.close(() => {
          clearInterval(sweep);
          clearTimeout(cut);
          resolve();
        });
        server.closeIdleConnections();
      });
      await apollo.stop();
      await readinessState.stop();
      await live?.close();
      // Pollers stop with the process; records keep their last state.
      await operations.close();
      await redis?.close();
      // Last, and bounded: calls still on the wire (a stuck backend, or calls of requests cut
      // above) get a short drain, then their connections are destroyed (adapters/pool.ts).
      await o.registry.close();
    },
  };
}

/** The default live hub: this gateway's backends' watchers, an in-memory event log, metrics and logs. */
function defaultLiveHub(o: GatewayOptions, services: GatewayServices, watchers: WatcherDirectory, schema: GraphQLSchema, metrics: GatewayMetrics): RunningLiveHub {
  const c = { ...LIVE_DEFAULTS, ...o.config.live };
  const hub = createLiveHub({
    log: new MemoryEventLog({ maxEvents: c.eventLogMaxEvents, retentionMs: c.eventLogRetentionMs }),
    services,
    watchers,
    createContext: (r) => createExecutionContext(services, r),
    visibleOperation: (ctx, id) => loadOperation(ctx, id),
    schema,
    accessTtlMs: c.accessTtlMs,
    maxQueued: c.maxQueued,
    watcherWaitMs: c.watcherWaitMs,
    budget: {
      maxPerAddress: c.maxSubscriptionsPerAddress,
      maxBytesPerAddress: c.maxSubscriptionBytesPerAddress,
      maxBytesPerSubscription: c.maxSubscriptionBytes,
      maxStartChecksPerAddress: c.maxStartChecksPerAddress,
      // Read with the socket settings (WS_MAX_SUBSCRIPTIONS_PER_CREDENTIAL), kept by the hub: its key is the credentials that proved valid.
      maxPerCredential: resolveWsOptions(o.config.ws).maxSubscriptionsPerCredential,
    },
    metrics: metrics.live.hooks(),
    onWatcherStatus: (s, err) =>
      (err ? o.logger.warn.bind(o.logger) : o.logger.info.bind(o.logger))({ backend: s.backend, state: s.state, source: s.source, message: s.message ?? undefined, err: err instanceof Error ? err.message : err === undefined ? undefined : String(err) }, 'watcher state'),
    onError: (err, where) => o.logger.error({ err, ...where }, 'live hub error'),
  });
  metrics.live.watch(hub);
  return hub;
}
