/**
 * The gateway's wiring, and nothing else: each part is built by the module named for it, in the
 * order they need each other (the watcher directory before the tracker and the loaders, the
 * services before the live hub), then served on one port: Apollo Server 5 through
 * `executeHTTPGraphQLRequest` on Node's own http server, graphql-ws on upgrade, `/readyz`,
 * `/metrics`, the API schema, GraphiQL and the live page. `stop()` takes them down in the reverse order.
 */
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { GatewayContext, GatewayServices } from '../domain/context';
import { CallerLimiter } from '../domain/caller-limiter';
import type { BackendRegistry } from '../domain/registry';
import { WatcherDirectory } from '../domain/watchers';
import type { OperationTracker, OperationTrackerOptions } from '../subscriptions/operations';
import type { LiveHub } from '../subscriptions/live';
import { createApolloServer } from './apollo';
import type { GatewayConfig } from './config';
import { SERVER_SETTINGS } from './config-definition';
import { createGraphiQLHandler, type GraphiQLHandlerOptions } from './graphiql';
import { resolveHttpEdgeOptions, type HttpEdgeOptions } from './http/config';
import { createCorsPolicy } from './http/cors';
import { OriginRule } from './http/origin';
import type { EdgeError } from './http/errors';
import { createApiSchemaRoute } from './http/api-schema-route';
import { createGraphQLHttpHandler } from './http/graphql-handler';
import { createRequestListener } from './http/router';
import { listenManagement } from './http/management';
import { createHttpServer, drainHttpServer } from './http/server';
import { loadServerTls } from './http/tls';
import { createHttpContext } from './http-context';
import { createIdempotencyStore } from './idempotency/for-gateway';
import { operationLimits } from './limits';
import { apolloLimitOptions } from './limits/apollo';
import { createLivePageHandler, type LivePageOptions } from './live';
import type { LiveConfig } from './live-config';
import { createGatewayLiveHub } from './live-hub';
import type { DoctorConfig } from './doctor-config';
import { defaultReplicaId } from '../subscriptions/leases';
import type { Logger } from './logger';
import { GatewayMetrics } from './metrics';
import { createOperationTracker } from './operation-tracking';
import { createPossibleTypesHandler } from './possible-types';
import { ReadinessState, type ReadinessConfig } from './readiness';
import { connectRedis, type GatewayRedis } from './redis';
import { buildGatewaySchema } from './schema';
import { WS_CLOSE_WAIT_MS } from './shutdown-timing';
import { createStreamTransport } from './streams';
import { createWsTransport, resolveWsOptions, type WsOptions } from './ws';
import { QueueBudget } from './ws/queue-budget';

export interface GatewayOptions {
  /**
   * With `redis` (scale-out) the default tracker keeps its records in Redis, idempotency keys are
   * kept there too, `/readyz` reports it, and `stop()` closes the connection after in-flight work.
   * Without it records and keys stay in the process.
   */
  config: Pick<GatewayConfig, 'port' | 'host' | 'maxConcurrentReads' | 'maxBodyBytes'> &
    Partial<
      Pick<
        GatewayConfig,
        | 'shutdownGraceMs'
        | 'redis'
        | 'tls'
        | 'managementPort'
        | 'executionEngine'
        | 'compiledDocumentsMaxBytes'
        | 'compiledDocumentsSightings'
      >
    > & {
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
      /** The volume doctor (server/doctor-config.ts); unset ones take their defaults. */
      doctor?: Partial<DoctorConfig>;
    };
  registry: BackendRegistry;
  logger: Logger;
  /** Served at `/metrics`; pass the instance the registry's transport reports to. @default a new one */
  metrics?: GatewayMetrics;
  /** Tracks asynchronous mutations. @default a new in-process tracker reporting to `metrics` */
  operations?: OperationTracker;
  /** Poll settings of the default tracker. */
  operationOptions?: Pick<OperationTrackerOptions, 'pollMs' | 'maxPollMs' | 'defaultTimeoutMs'>;
  /**
   * Feeds graphql-ws subscriptions (same port and path, server/ws/). `stop()` closes it after the
   * sockets. @default a live hub over this gateway's backends and an in-process event log
   * (`config.events`); `false`: none, every subscription is answered SUBSCRIPTIONS_UNAVAILABLE
   */
  live?: LiveHub | false;
  /** GraphiQL page settings (demo mode pre-fills the demo headers). @default the page's defaults */
  graphiql?: Omit<GraphiQLHandlerOptions, 'endpointPath'>;
  /** Live status page settings, `GET /live` (demo mode pre-fills the demo headers). @default the page's defaults */
  livePage?: Omit<LivePageOptions, 'endpointPath'>;
  /**
   * Whether every loopback origin (a page from `http://localhost:<any port>`, `127.x` or `[::1]`) is
   * allowed besides the listed ones, on every transport (server/http/origin.ts): demo mode, so an
   * app on a local dev server can use the demo. @default false
   */
  loopbackOrigins?: boolean;
  /**
   * Whether the background probe feeding `/readyz` runs for every backend. Tests that count a
   * simulator's requests turn it off; `/readyz` then shows every backend UNKNOWN, and the probe
   * runs only for a backend with a breaker not closed (which only it can close). @default true
   */
  readinessProbe?: boolean;
}

export interface RunningGateway {
  /** e.g. `http://127.0.0.1:4000/graphql` (`https://…` with TLS). */
  url: string;
  /** With `config.managementPort`: e.g. `http://127.0.0.1:9090`, serving /healthz, /readyz, /metrics. */
  managementUrl?: string;
  /** With TLS: reads the certificate files again for new connections (SIGHUP); false when they were unusable and the old ones stay. */
  reloadCertificates?(): boolean;
  port: number;
  server: Server;
  operations: OperationTracker;
  /** `/readyz` answers 503 (`draining`) from now on; everything else is served as before. */
  drain(): void;
  /** Closes every socket with 1012, stops accepting, finishes in-flight requests, closes the hub and backend pools. */
  stop(): Promise<void>;
}

export async function startGateway(o: GatewayOptions): Promise<RunningGateway> {
  const { registry, logger } = o;
  const metrics = o.metrics ?? new GatewayMetrics({ processMetrics: false });
  const redis: GatewayRedis | undefined = o.config.redis ? connectRedis(o.config.redis, logger) : undefined;
  // Filled by the default hub as it starts its watchers; the tracker (watched operations) and the
  // loaders (watch-fed reads) ask it. Empty without the default hub.
  const watchers = new WatcherDirectory((id) => registry.find(id));
  // Across replicas, the holder of a backend's watcher lease takes over the lost watched operations
  // of that backend (the hub, built below, knows who holds it).
  let holdsLease: (backend: string) => boolean = () => true;
  // One id per process, in its operation records, leases and published statuses.
  const replica = defaultReplicaId();
  const operations =
    o.operations ??
    createOperationTracker({
      registry,
      watchers,
      redis,
      metrics,
      logger,
      poll: o.operationOptions,
      replication: { isLeaseHolder: (backend) => holdsLease(backend) },
      replica,
    });
  // Operation limits: parse options, validation rules and the wrapped schema (server/limits).
  const limits = operationLimits(o.config.limits);
  // One schema for direct clients and for a supergraph's router: a Federation 2 subgraph.
  const schema = buildGatewaySchema();
  const limited = apolloLimitOptions<GatewayContext>(limits, schema);
  const idempotency = createIdempotencyStore(logger, redis);
  const services: GatewayServices = {
    registry,
    operations,
    idempotency,
    maxConcurrentReads: o.config.maxConcurrentReads,
    watchers,
  };
  const hub =
    o.live === undefined
      ? createGatewayLiveHub({
          services,
          watchers,
          schema: limited.schema,
          metrics,
          logger,
          live: o.config.live,
          ws: o.config.ws,
          redis,
          replica,
          doctor: o.config.doctor,
        })
      : undefined;
  const live: LiveHub | undefined = o.live === false ? undefined : (o.live ?? hub);
  if (hub) services.live = hub.mutations;
  const replication = hub?.replication;
  if (replication) holdsLease = (backend) => replication.watchers.holds(backend);
  const apollo = createApolloServer({
    limits,
    limited,
    engine: o.config.executionEngine,
    compiledDocuments: { maxBytes: o.config.compiledDocumentsMaxBytes, sightings: o.config.compiledDocumentsSightings },
    logger,
    metrics,
    trustedDocuments: o.config.http?.trustedDocuments?.documents,
  });
  await apollo.start();

  const http = resolveHttpEdgeOptions(o.config.http);
  const countRefusal = (err: EdgeError): void =>
    metrics.httpRefusals.inc({ code: err.code, status: String(err.status) });
  // One rule for every transport: graphql-ws upgrades, SSE and multipart streams, CORS.
  const wsConfig = resolveWsOptions(o.config.ws);
  const origins = OriginRule.of(http.cors.origins, wsConfig.allowedOrigins, o.loopbackOrigins);
  // The bytes one address may have queued, across its sockets and HTTP streams.
  const queues = new QueueBudget(wsConfig.maxBufferedBytesPerAddress);
  // Subscriptions over SSE and multipart HTTP (server/streams/), fed by the same hub as graphql-ws.
  const streams = createStreamTransport({
    schema: limited.schema,
    limits,
    services,
    hub: live,
    trustProxyHops: http.trustProxyHops,
    origins,
    maxBufferedBytes: wsConfig.maxBufferedBytes,
    queues,
    logger,
    metrics,
  });
  const handleGraphQL = createGraphQLHttpHandler({
    maxBodyBytes: o.config.maxBodyBytes,
    limiter: new CallerLimiter(http.rateLimit),
    trustProxyHops: http.trustProxyHops,
    trusted: http.trustedDocuments,
    csrfPrevention: http.csrfPrevention,
    maxBatchSize: http.maxBatchSize,
    onRefused: countRefusal,
    logger,
    streams,
    execute: (httpGraphQLRequest, { req, signal }) =>
      apollo.executeHTTPGraphQLRequest({
        httpGraphQLRequest,
        context: async () =>
          createHttpContext(services, {
            headers: req.headers,
            requestId: httpGraphQLRequest.headers.get('x-request-id'),
            createLimits: () => limits.executionGuards.createExecutionLimits(signal),
          }),
      }),
  });

  // Fed by background probes; /readyz reads it and never calls a backend itself. Watchers are
  // reported, not required: a backend without one still serves queries.
  const readinessState = new ReadinessState({
    registry,
    config: o.config.readiness,
    redis: redis ? () => redis.health() : undefined,
    watchers: () => hub?.statuses() ?? [],
  });
  const readiness = async (): Promise<{ ready: boolean } & Record<string, unknown>> => ({
    ...readinessState.report(),
    // Across replicas: this replica's log reader, and per backend who watches it and its view here.
    ...(hub?.replication ? { replication: await hub.replication.report() } : {}),
  });
  metrics.observeBreakers(registry.breakers);

  const listener = createRequestListener(
    {
      graphiql: createGraphiQLHandler({ ...o.graphiql, endpointPath: '/graphql' }),
      live: createLivePageHandler({ ...o.livePage, endpointPath: '/graphql' }),
      possibleTypes: createPossibleTypesHandler(limited.schema),
      // The subgraph's own schema: the printer reads its Federation metadata.
      ...(http.schemaSdl ? { apiSchema: createApiSchemaRoute(schema) } : {}),
      graphql: handleGraphQL,
      readiness,
      metrics: async () => ({ contentType: metrics.registry.contentType, text: await metrics.registry.metrics() }),
    },
    createCorsPolicy(http.cors, origins),
    logger,
    countRefusal,
  );
  // Read before listening: unusable files stop start-up (ConfigError).
  const tls = o.config.tls && loadServerTls(o.config.tls, logger);
  const server = createHttpServer(listener, http, countRefusal, tls?.serverOptions);
  // graphql-ws on the same port and path (server/ws/).
  const ws = createWsTransport({
    config: wsConfig,
    path: '/graphql',
    trustProxyHops: http.trustProxyHops,
    origins,
    schema: limited.schema,
    limits,
    trusted: http.trustedDocuments,
    services,
    hub: live,
    queues,
    logger,
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
  const management =
    o.config.managementPort === undefined
      ? undefined
      : await listenManagement(listener, http, countRefusal, o.config.host, o.config.managementPort).catch(
          async (err: unknown) => {
            server.close();
            await redis?.close();
            throw err;
          },
        );
  // Watchers and probes start once the gateway serves: their first reads need no caller.
  hub?.start();
  // Without the readiness probe, breakers still need their probe to close.
  readinessState.start(o.readinessProbe === false ? 'breakers' : 'all');
  const shownHost = o.config.host === '0.0.0.0' || o.config.host === '::' ? 'localhost' : o.config.host;
  const graceMs = o.config.shutdownGraceMs ?? SERVER_SETTINGS.shutdownGraceMs.default;

  return {
    url: `${tls ? 'https' : 'http'}://${shownHost}:${port}/graphql`,
    ...(management ? { managementUrl: `http://${shownHost}:${management.port}` } : {}),
    ...(tls ? { reloadCertificates: () => tls.reload(server) } : {}),
    port,
    server,
    operations,
    drain: () => readinessState.drain(),
    async stop() {
      // Across replicas, another replica takes the watchers over now, not a lease's lifetime later.
      if (hub?.replication) await hub.handOver();
      // Sockets (1012) and streams (SSE `retry:`) first: clients reconnect (elsewhere) and resume from their cursors.
      await Promise.all([
        ws.close(Math.min(graceMs, WS_CLOSE_WAIT_MS)),
        streams.close(Math.min(graceMs, WS_CLOSE_WAIT_MS)),
      ]);
      await drainHttpServer(server, graceMs);
      // After the main port: probes and scrapes see the drain until it ends.
      await management?.close();
      await apollo.stop();
      await readinessState.stop();
      await live?.close();
      // Pollers stop with the process; records keep their last state.
      await operations.close();
      await redis?.close();
      // Last, and bounded: calls still on the wire (a stuck backend, or calls of requests cut
      // above) get a short drain, then their connections are destroyed (adapters/pool.ts).
      await registry.close();
    },
  };
}
