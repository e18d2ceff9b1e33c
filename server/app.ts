/**
 * The HTTP app: Apollo Server 5 on Node's own http server (through Apollo's
 * `executeHTTPGraphQLRequest`, so health and later websocket routes share the port), plus
 * `/healthz` and `/readyz`.
 */
import { ApolloServer, HeaderMap, type GraphQLRequestContextWillSendResponse } from '@apollo/server';
import { ApolloServerPluginLandingPageDisabled } from '@apollo/server/plugin/disabled';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { resolvers } from '../resolvers';
import { loadTypeDefs } from '../schema';
import type { GatewayConfig } from './config';
import { createContext, type GatewayContext } from './context';
import { createFormatError, formatPartial } from './errors';
import type { Logger } from './logger';
import type { BackendRegistry } from './registry';
import { OperationTracker, RedisOperationStore, TERMINAL, type OperationTrackerOptions } from '../subscriptions/operations';
import { createGraphiQLHandler, type GraphiQLHandlerOptions } from './graphiql';
import { GatewayMetrics } from './metrics';
import { observabilityPlugin } from './observability';
import { connectRedis, type GatewayRedis, type RedisHealth } from './redis';

export interface GatewayOptions {
  /**
   * With `redis` (scale-out) the default tracker keeps its records in Redis, `/readyz` reports
   * it, and `stop()` closes the connection after in-flight work. Without it records stay in memory.
   */
  config: Pick<GatewayConfig, 'port' | 'host' | 'maxConcurrentReads' | 'maxBodyBytes'> & Partial<Pick<GatewayConfig, 'shutdownGraceMs' | 'redis'>>;
  registry: BackendRegistry;
  logger: Logger;
  /** Served at `/metrics`; pass the instance the registry's transport reports to. @default a new one */
  metrics?: GatewayMetrics;
  /** Tracks asynchronous mutations. @default a new in-memory tracker reporting to `metrics` */
  operations?: OperationTracker;
  /** Poll settings of the default tracker. */
  operationOptions?: Pick<OperationTrackerOptions, 'pollMs' | 'maxPollMs' | 'defaultTimeoutMs'>;
  /** GraphiQL page settings (demo mode pre-fills the demo headers). @default the page's defaults */
  graphiql?: Omit<GraphiQLHandlerOptions, 'endpointPath'>;
}

export interface RunningGateway {
  /** e.g. `http://127.0.0.1:4000/graphql`. */
  url: string;
  port: number;
  server: Server;
  operations: OperationTracker;
  /** Stops accepting, finishes in-flight requests, closes backend pools. */
  stop(): Promise<void>;
}

class BodyTooLarge extends Error {}

/** Errors in the GraphQL document or its variables (not in the HTTP request's parameters). */
const DOCUMENT_ERROR_CODES = new Set(['GRAPHQL_PARSE_FAILED', 'GRAPHQL_VALIDATION_FAILED', 'BAD_USER_INPUT']);

function readBody(req: IncomingMessage, limit: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > limit) {
        reject(new BodyTooLarge());
        req.destroy();
        return;
      }
      chunks.push(c);
    });
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

function sendJson(res: ServerResponse, status: number, body: unknown, extra: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(text), ...extra });
  res.end(text);
}

export async function startGateway(o: GatewayOptions): Promise<RunningGateway> {
  const metrics = o.metrics ?? new GatewayMetrics({ processMetrics: false });
  const redis: GatewayRedis | undefined = o.config.redis ? connectRedis(o.config.redis, o.logger) : undefined;
  const operations =
    o.operations ??
    new OperationTracker({
      ...o.operationOptions,
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
  const apollo = new ApolloServer<GatewayContext>({
    typeDefs: loadTypeDefs(),
    resolvers,
    formatError: createFormatError(o.logger),
    includeStacktraceInErrorResponses: false,
    // The gateway owns shutdown (server/main.ts): Apollo's own signal handlers would race it.
    stopOnTerminationSignals: false,
    plugins: [
      // Apollo's default landing page loads from a CDN; an air-gapped gateway must not.
      ApolloServerPluginLandingPageDisabled(),
      observabilityPlugin(o.logger, metrics),
      {
        async requestDidStart() {
          return {
            // Failures of single backends go beside the data instead of nulling it.
            async willSendResponse(rc: GraphQLRequestContextWillSendResponse<GatewayContext>) {
              // GraphQL over HTTP: a client that accepts only application/json (not
              // application/graphql-response+json) gets 200 for parse, validation and variable
              // errors; Apollo would send 400.
              const accept = rc.request.http?.headers.get('accept') ?? '';
              const errors = rc.response.body.kind === 'single' ? rc.response.body.singleResult.errors : undefined;
              if (rc.response.http.status === 400 && !accept.includes('application/graphql-response+json') && errors?.every((e) => DOCUMENT_ERROR_CODES.has(String(e.extensions?.code)))) {
                rc.response.http.status = 200;
              }
              const partial = rc.contextValue.partialErrors;
              if (partial.length === 0 || rc.response.body.kind !== 'single') return;
              const result = rc.response.body.singleResult;
              result.errors = [...(result.errors ?? []), ...partial.map((p) => formatPartial(p.error, p.path))];
            },
          };
        },
      },
    ],
  });
  await apollo.start();

  const handleGraphQL = async (req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> => {
    const headers = new HeaderMap();
    for (const [k, v] of Object.entries(req.headers)) if (v !== undefined) headers.set(k, Array.isArray(v) ? v.join(', ') : v);
    let body: unknown;
    if (req.method === 'POST') {
      const text = await readBody(req, o.config.maxBodyBytes);
      const type = headers.get('content-type') ?? '';
      if (type.includes('json') && text.length > 0) {
        try {
          body = JSON.parse(text);
        } catch {
          sendJson(res, 400, { errors: [{ message: 'request body is not valid JSON', extensions: { code: 'BAD_REQUEST' } }] });
          return;
        }
      } else {
        body = text;
      }
    }
    const abort = new AbortController();
    res.on('close', () => {
      if (!res.writableFinished) abort.abort();
    });
    const result = await apollo.executeHTTPGraphQLRequest({
      httpGraphQLRequest: { method: req.method ?? 'GET', headers, search: url.search, body },
      context: async () =>
        createContext({
          registry: o.registry,
          headers: req.headers,
          requestId: headers.get('x-request-id'),
          signal: abort.signal,
          maxConcurrentReads: o.config.maxConcurrentReads,
          operations,
        }),
    });
    const out: Record<string, string> = {};
    for (const [k, v] of result.headers) out[k] = v;
    res.writeHead(result.status ?? 200, out);
    if (result.body.kind === 'complete') {
      res.end(result.body.string);
    } else {
      for await (const chunk of result.body.asyncIterator) res.write(chunk);
      res.end();
    }
  };

  const notConfigured: RedisHealth = { status: 'NOT_CONFIGURED', latencyMs: null, message: 'Redis is not configured (REDIS_URL): operation records are kept in this process only' };
  const readiness = async (): Promise<{ ready: boolean; backends: unknown[]; redis: RedisHealth }> => {
    const [checks, redisHealth] = await Promise.all([
      Promise.all(o.registry.all.map(async (b) => ({ id: b.id, kind: b.kind, ...(await b.health()) }))),
      redis ? redis.health() : notConfigured,
    ]);
    return { ready: checks.every((c) => c.status === 'UP') && redisHealth.status !== 'DOWN', backends: checks, redis: redisHealth };
  };

  const graphiql = createGraphiQLHandler({ ...o.graphiql, endpointPath: '/graphql' });
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://gateway.invalid');
    // A browser asking for HTML at /graphql gets the bundled IDE; everything else is GraphQL.
    if (graphiql(req, res, url)) return;
    const route = async (): Promise<void> => {
      if (url.pathname === '/graphql') return handleGraphQL(req, res, url);
      if (url.pathname === '/healthz' && req.method === 'GET') return sendJson(res, 200, { status: 'ok' });
      if (url.pathname === '/readyz' && req.method === 'GET') {
        const r = await readiness();
        return sendJson(res, r.ready ? 200 : 503, r);
      }
      if (url.pathname === '/metrics' && req.method === 'GET') {
        const text = await metrics.registry.metrics();
        res.writeHead(200, { 'content-type': metrics.registry.contentType });
        return void res.end(text);
      }
      sendJson(res, 404, { error: 'not found', routes: ['/graphql', '/graphiql/assets/', '/healthz', '/readyz', '/metrics'] });
    };
    route().catch((err: unknown) => {
      if (err instanceof BodyTooLarge) {
        if (!res.headersSent) sendJson(res, 413, { errors: [{ message: `request body exceeds ${o.config.maxBodyBytes} bytes`, extensions: { code: 'BAD_REQUEST' } }] }, { connection: 'close' });
        return;
      }
      o.logger.error({ err }, 'request failed');
      if (!res.headersSent) sendJson(res, 500, { errors: [{ message: 'Internal server error', extensions: { code: 'INTERNAL_SERVER_ERROR' } }] });
      else res.destroy();
    });
  });
  server.keepAliveTimeout = 65_000;

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(o.config.port, o.config.host, () => resolve());
  }).catch(async (err: unknown) => {
    await redis?.close();
    throw err;
  });
  const port = (server.address() as AddressInfo).port;
  const shownHost = o.config.host === '0.0.0.0' || o.config.host === '::' ? 'localhost' : o.config.host;

  return {
    url: `http://${shownHost}:${port}/graphql`,
    port,
    server,
    operations,
    async stop() {
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
      // Pollers stop with the process; records keep their last state.
      await operations.close();
      await redis?.close();
      // Last, and bounded: calls still on the wire (a stuck backend, or calls of requests cut
      // above) get a short drain, then their connections are destroyed (adapters/pool.ts).
      await o.registry.close();
    },
  };
}
