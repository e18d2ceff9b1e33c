/**
 * `/graphql` over node:http, in front of GraphQL execution: admit the caller (429), read the body
 * (413), parse it (400), screen the operation (persisted queries, trusted documents), hand a
 * subscription to `streams` when it accepts a stream (else 400), check CSRF prevention (400), and
 * hand any other request to `execute`, streaming its answer. A batch (a JSON array) is taken apart
 * and each operation screened and executed as a request of its own (server/http/batch.ts).
 */
import type { HeaderMap, HTTPGraphQLRequest, HTTPGraphQLResponse } from '@apollo/server';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { CallerLimiter } from '../../domain/caller-limiter';
import type { Logger } from '../logger';
import { batchOperations, runBatch } from './batch';
import { DRAIN_FACTOR, drain, readBody, refuseEarly } from './body';
import { callerIdentity } from './caller-identity';
import { checkCsrf, type CsrfMode } from './csrf';
import { EdgeError, EdgeErrorCode, RateLimitedError } from './errors';
import { readParams, writeParams } from './graphql-params';
import { headerMapOf, sendHTTPGraphQLResponse, sendJsonText } from './respond';
import type { TrustedDocumentsConfig } from './config';
import {
  screenOperation,
  selectsSubscription,
  SubscriptionOverHttpError,
  type OperationParams,
} from './operation-screen';
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
  /** How CSRF prevention decides (server/http/csrf.ts). */
  csrfPrevention: CsrfMode;
  /** Most operations one HTTP batch may hold (server/http/batch.ts); 0 = batching off. */
  maxBatchSize: number;
  /** Told of each operation of a batch refused at the edge (whole requests' refusals reach the router); must not throw. */
  onRefused?: (err: EdgeError) => void;
  logger: Logger;
  /**
   * Serves subscriptions as HTTP streams (server/streams/: SSE, multipart). Without it, or for a
   * request that accepts neither, a subscription is refused with SUBSCRIPTION_NOT_SUPPORTED_OVER_HTTP.
   */
  streams?: SubscriptionStreams;
  /** Runs the checked request; `signal` aborts when the client goes away. */
  execute(
    request: HTTPGraphQLRequest,
    http: { req: IncomingMessage; signal: AbortSignal },
  ): Promise<HTTPGraphQLResponse>;
}

/** What the handler needs of the stream transport (server/streams/). */
export interface SubscriptionStreams {
  /** Whether the request's `Accept` asks for a stream served. */
  accepts(req: IncomingMessage): boolean;
  /** Serves the subscription `params` select until the stream ends. */
  serve(req: IncomingMessage, res: ServerResponse, params: OperationParams): Promise<void>;
  /** Whether a query's or mutation's answer must be sent as SSE (the request accepts no JSON). */
  answersAsEvents(req: IncomingMessage): boolean;
  /** Sends a query's or mutation's JSON result as one SSE event, then the end. */
  sendResult(res: ServerResponse, json: string): void;
}

export type GraphQLHttpHandler = (req: IncomingMessage, res: ServerResponse, url: URL) => Promise<void>;

export function createGraphQLHttpHandler(o: GraphQLHttpHandlerOptions): GraphQLHttpHandler {
  /** Charges the caller `weight` requests until the response closes. @throws RateLimitedError */
  const admit = (req: IncomingMessage, res: ServerResponse, weight: number): { release(): void; refund(): void } => {
    if (!o.limiter) return { release: () => undefined, refund: () => undefined };
    const id = callerIdentity(req.headers, req.socket.remoteAddress, o.trustProxyHops);
    const admission = o.limiter.admit(id, weight);
    if (!admission.ok) {
      // Debug only: a flood of refusals must not become a flood of log lines.
      o.logger.debug(
        { limit: admission.limit, scope: admission.scope, address: id.address, credentials: id.hasCredentials },
        'request refused: caller over its limit',
      );
      throw new RateLimitedError(admission.limit, admission.scope, admission.retryAfterSeconds);
    }
    res.once('close', admission.release);
    return admission;
  };

  // Refusals are thrown: the router counts and answers every EdgeError in one place.
  return async (req, res, url) => {
    const slot = admit(req, res, 1);
    const method = req.method ?? 'GET';
    const headers = headerMapOf(req.headers);
    let body = method === 'POST' ? await readPostBody(req, res, headers, o.maxBodyBytes) : undefined;
    if (method === 'POST' && Array.isArray(body)) {
      const operations = batchOperations(body, o.maxBatchSize);
      // The request's own slot counts the first operation; a batch refused here costs nothing.
      try {
        if (operations.length > 1) admit(req, res, operations.length - 1);
      } catch (err) {
        slot.refund();
        throw err;
      }
      checkCsrf(o.csrfPrevention, method, req.headers);
      const signal = abortOnClose(res);
      // Each operation's answer is one JSON value of the array.
      headers.set('accept', 'application/json');
      const text = await runBatch(operations, {
        screen: (params) => {
          const next = screenOperation(params, o.trusted);
          if (selectsSubscription(next)) throw new SubscriptionOverHttpError();
          return writeParams(method, params, url.searchParams, next).body as OperationParams;
        },
        execute: async (params) =>
          completeJson(
            await inOperationSpan(extractTraceContext(req.headers), 'http', () =>
              o.execute({ method, headers, search: url.search, body: params }, { req, signal }),
            ),
          ),
        onRefused: (err) => o.onRefused?.(err),
      });
      return sendJsonText(res, 200, text, { 'cache-control': 'no-store' });
    }
    let search = url.search;
    const params = readParams(method, body, url.searchParams);
    if (params) {
      const next = screenOperation(params, o.trusted);
      if (selectsSubscription(next)) {
        if (!o.streams?.accepts(req)) throw new SubscriptionOverHttpError();
        // A stream counts against the subscription quotas only (the live hub's budget), not the in-flight cap.
        slot.release();
        return o.streams.serve(req, res, next);
      }
      if (next !== params) ({ body, search } = writeParams(method, body, url.searchParams, next));
    }
    checkCsrf(o.csrfPrevention, method, req.headers);
    const signal = abortOnClose(res);
    // graphql-sse's client sends queries and mutations as event streams too: executed as JSON, sent as one event.
    const asEvents = o.streams?.answersAsEvents(req) === true;
    if (asEvents) headers.set('accept', 'application/json');
    // The operation's span, child of the caller's `traceparent` (server/tracing).
    const result = await inOperationSpan(extractTraceContext(req.headers), 'http', () =>
      o.execute({ method, headers, search, body }, { req, signal }),
    );
    if (asEvents && (result.status ?? 200) === 200 && result.body.kind === 'complete')
      return o.streams!.sendResult(res, result.body.string);
    // Answers carry the caller's own data: no shared cache may keep them.
    await sendHTTPGraphQLResponse(res, result, { 'cache-control': 'no-store' });
  };
}

/**
 * A POST's body: parsed JSON when its content type says JSON, else the text (GraphQL execution
 * refuses it). @throws BodyTooLargeError (413), EdgeError BAD_REQUEST when the JSON does not parse
 */
async function readPostBody(
  req: IncomingMessage,
  res: ServerResponse,
  headers: HeaderMap,
  maxBodyBytes: number,
): Promise<unknown> {
  const early = refuseEarly(req, maxBodyBytes);
  if (early) {
    if (!early.close) drain(req, maxBodyBytes * DRAIN_FACTOR);
    throw early;
  }
  // We listen to `checkContinue`, so a client waiting for `100 Continue` is told to go on here.
  if (/100-continue/i.test(String(req.headers.expect ?? ''))) res.writeContinue();
  const text = await readBody(req, maxBodyBytes);
  const type = headers.get('content-type') ?? '';
  if (!type.includes('json') || text.length === 0) return text;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new EdgeError(EdgeErrorCode.BadRequest, 400, 'request body is not valid JSON');
  }
}

/** A signal aborted when the client goes away before the answer is sent. */
function abortOnClose(res: ServerResponse): AbortSignal {
  const abort = new AbortController();
  res.on('close', () => {
    if (!res.writableFinished) abort.abort();
  });
  return abort.signal;
}

/** The JSON text of an answer to a request that accepts JSON only (Apollo streams only to clients that accept multipart). */
function completeJson(result: HTTPGraphQLResponse): string {
  if (result.body.kind !== 'complete') throw new Error('an operation asked for as JSON was answered incrementally');
  return result.body.string;
}
