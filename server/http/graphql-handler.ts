/**
 * `/graphql` over node:http, in front of GraphQL execution: admit the caller (429), read the body
 * (413), parse it (400), screen the operation (persisted queries, trusted documents, subscriptions),
 * then hand the request to `execute` and stream its answer.
 */
import { HeaderMap, type HTTPGraphQLRequest, type HTTPGraphQLResponse } from '@apollo/server';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { CallerLimiter } from '../../domain/caller-limiter';
import type { Logger } from '../logger';
import { DRAIN_FACTOR, drain, readBody, refuseEarly } from './body';
import { callerIdentity } from './caller-identity';
import { EdgeError, EdgeErrorCode, RateLimitedError } from './errors';
import { readParams, writeParams } from './graphql-params';
import type { TrustedDocumentsConfig } from './config';
import { refuseSubscriptionOverHttp, screenOperation } from './operation-screen';
import { extractTraceContext, inOperationSpan } from '../tracing/operation';

export interface GraphQLHttpHandlerOptions {
  /** Largest accepted body in bytes. */
  maxBodyBytes: number;
  /** Per-caller limits; none = unlimited. */
  limiter?: CallerLimiter;
  /** See `HttpEdgeConfig.trustProxyHops`. */
  trustProxyHops: number;
  /** Trusted documents, when on. */
  trusted?: TrustedDocumentsConfig;
  logger: Logger;
  /** Runs the checked request; `signal` aborts when the client goes away. */
  execute(request: HTTPGraphQLRequest, http: { req: IncomingMessage; signal: AbortSignal }): Promise<HTTPGraphQLResponse>;
}

export type GraphQLHttpHandler = (req: IncomingMessage, res: ServerResponse, url: URL) => Promise<void>;

export function createGraphQLHttpHandler(o: GraphQLHttpHandlerOptions): GraphQLHttpHandler {
  // Refusals are thrown: the router counts and answers every EdgeError in one place.
  return async (req, res, url) => {
    if (o.limiter) {
      const id = callerIdentity(req.headers, req.socket.remoteAddress, o.trustProxyHops);
      const admission = o.limiter.admit(id);
      if (!admission.ok) {
        // Debug only: a flood of refusals must not become a flood of log lines.
        o.logger.debug({ limit: admission.limit, scope: admission.scope, address: id.address, credentials: id.hasCredentials }, 'request refused: caller over its limit');
        throw new RateLimitedError(admission.limit, admission.scope, admission.retryAfterSeconds);
      }
      res.once('close', admission.release);
    }
    const method = req.method ?? 'GET';
    const headers = new HeaderMap();
    for (const [k, v] of Object.entries(req.headers)) if (v !== undefined) headers.set(k, Array.isArray(v) ? v.join(', ') : v);
    let body: unknown;
    if (method === 'POST') {
      const early = refuseEarly(req, o.maxBodyBytes);
      if (early) {
        if (!early.close) drain(req, o.maxBodyBytes * DRAIN_FACTOR);
        throw early;
      }
      // We listen to `checkContinue`, so a client waiting for `100 Continue` is told to go on here.
      if (/100-continue/i.test(String(req.headers.expect ?? ''))) res.writeContinue();
      const text = await readBody(req, o.maxBodyBytes);
      const type = headers.get('content-type') ?? '';
      if (type.includes('json') && text.length > 0) {
        try {
          body = JSON.parse(text);
        } catch {
          throw new EdgeError(EdgeErrorCode.BadRequest, 400, 'request body is not valid JSON');
        }
      } else {
        body = text;
      }
    }
    let search = url.search;
    const params = readParams(method, body, url.searchParams);
    if (params) {
      const next = screenOperation(params, o.trusted);
      refuseSubscriptionOverHttp(next);
      if (next !== params) ({ body, search } = writeParams(method, body, url.searchParams, next));
    }
    const abort = new AbortController();
    res.on('close', () => {
      if (!res.writableFinished) abort.abort();
    });
    // The operation's span, child of the caller's `traceparent` (server/tracing).
    const result = await inOperationSpan(extractTraceContext(req.headers), 'http', () => o.execute({ method, headers, search, body }, { req, signal: abort.signal }));
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
}
