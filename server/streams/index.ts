/**
 * Subscriptions over HTTP streams, next to graphql-ws (server/ws/) on the same path: GraphQL over
 * SSE (sse.ts, the graphql-sse protocol's distinct connections mode, which Hive Gateway's and
 * Yoga's clients use) and Apollo's multipart subscriptions (multipart.ts, Apollo Client's
 * HttpLink and Apollo Router). The HTTP edge hands over a request that selects a subscription and
 * accepts one of them (accept.ts); everything else about it is graphql-ws's: the operation checks
 * (server/ws/operation.ts: limits, validation, variables, cost; trusted documents were screened
 * by the edge), credentials from the request's headers exactly as a query's, the live hub's
 * budget, start checks and access checks, the origin rule (server/http/origin.ts), and the
 * budget of queued bytes per address with the sockets (server/ws/queue-budget.ts). A stream holds
 * no HTTP in-flight slot and no timeout cuts it; it ends when the hub's stream ends, the client
 * goes away (the hub gets its place back), its queue or its address's queues pass their bound, or
 * the gateway stops (docs/subscriptions.md, "Transports").
 *
 * graphql-sse's own handler is not used: it keeps an unbounded queue per stream, serializes each
 * result again for every subscriber, and serves its single-connection mode's reservations
 * without any bound. Its framing is what sse.ts writes.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { GraphQLError, GraphQLFormattedError, GraphQLSchema } from 'graphql';
import type { SubscribePayload } from 'graphql-ws';
import { BadUserInputError } from '../../adapters/contract/errors';
import {
  errorCodeOf,
  formatGraphQLError,
  InternalError,
  toGraphQLError,
  unexpectedCause,
} from '../../adapters/contract/graphql-errors';
import { createExecutionContext, type GatewayServices } from '../../domain/context';
import { SerializedResult, type LiveHub, type LiveResult } from '../../subscriptions/live/types';
import { credentialsFromHeaders } from '../credentials';
import { addressBucket, clientAddress } from '../http/caller-identity';
import { ORIGIN_NOT_ALLOWED, originRefusalBody, type OriginRule } from '../http/origin';
import type { OperationParams } from '../http/operation-screen';
import { sendJson } from '../http/respond';
import type { OperationLimits } from '../limits';
import type { Logger } from '../logger';
import type { GatewayMetrics, QueueBytes, SlowConsumerCutReason, StreamTransportName } from '../metrics';
import { isSlowConsumer, SubscriptionsUnavailableError } from '../ws/errors';
import { checkOperation, ValidDocuments } from '../ws/operation';
import type { OutgoingQueue, QueueBudget } from '../ws/queue-budget';
import { bytesOf } from '../ws/shared-bytes';
import { streamKindOf, wantsEventsOnly } from './accept';
import { MULTIPART } from './multipart';
import { OpenStream } from './open-stream';
import type { StreamProtocol } from './protocol';
import { SSE } from './sse';

export { streamKindOf, type StreamKind } from './accept';

export interface StreamTransportOptions {
  /** The executable schema, wrapped by `limits`. */
  schema: GraphQLSchema;
  limits: OperationLimits;
  services: GatewayServices;
  /** Feeds subscriptions; without one every subscription gets SUBSCRIPTIONS_UNAVAILABLE. */
  hub?: LiveHub;
  /** See `HttpEdgeConfig.trustProxyHops`. */
  trustProxyHops: number;
  /** Which browser origins may open a stream: the rule every transport applies (server/http/origin.ts). */
  origins: OriginRule;
  /** Bytes queued for one response beyond which it is cut as a slow consumer: graphql-ws's `maxBufferedBytes`. */
  maxBufferedBytes: number;
  /** The bytes each client address may have queued, shared with graphql-ws (`maxBufferedBytesPerAddress`). */
  queues: QueueBudget;
  logger: Logger;
  /**
   * `gateway_stream_subscriptions` and `gateway_ws_queue_bytes`, cuts in
   * `gateway_slow_consumer_cuts_total`, refusals in `gateway_ws_refusals_total` with graphql-ws's.
   */
  metrics: GatewayMetrics;
}

export interface StreamTransport {
  /** Whether the request's `Accept` asks for a stream served here. */
  accepts(req: IncomingMessage): boolean;
  /** Serves the subscription `params` select as a stream, until it ends. */
  serve(req: IncomingMessage, res: ServerResponse, params: OperationParams): Promise<void>;
  /** Whether a query's or mutation's answer must be sent as SSE (the request accepts no JSON). */
  answersAsEvents(req: IncomingMessage): boolean;
  /** Sends a query's or mutation's JSON result as graphql-sse does: one `next` event, then `complete`. */
  sendResult(res: ServerResponse, json: string): void;
  /**
   * Shutdown: every open stream gets its protocol's restart (SSE a `retry:` field, multipart a
   * SHUTTING_DOWN error) and ends; a new one gets the same at once. Resolves once all are closed;
   * those still open after `waitMs` are cut.
   */
  close(waitMs: number): Promise<void>;
}

/**
 * Results at least this long (in UTF-16 units) are written as the hub's UTF-8 bytes, shared by
 * every stream that sends them (server/ws/shared-bytes.ts), between the protocol's framing: each
 * stream then queues three small writes instead of its own copy. Shorter ones are written as one
 * string: the writes cost more than the copy. Measured with 400 SSE readers of one address and
 * bursts of 80 events (the gateway a child process, three runs each): at 8 KB a result, shared
 * bytes took 3.5–3.7 ms of CPU per event against 8.2–13.5 and peaked at +73 to +105 MiB RSS
 * against +254 to +881; at 1 KB the CPU was even and RSS +103/+116 MiB against +360/+366; at 250
 * bytes they took 2.8–3.7 ms against 2.1–2.7 for the same RSS (docs/subscriptions.md, "Shared bytes").
 */
const SHARED_MIN_LENGTH = 1024;

/** How long an SSE client is told to wait before reconnecting after a shutdown: spread over 1–3 s so replicas are not hit at once. */
const retryMs = (): number => 1_000 + Math.floor(Math.random() * 2_000);
const RESTART = {
  code: 'SHUTTING_DOWN',
  message: 'the gateway is shutting down: subscribe again (to another replica) and resume from your last cursor',
};

/** One subscription streaming: its response, the hub's stream, and its queue as its address's budget sees it. */
class Live implements OutgoingQueue {
  constructor(
    readonly transport: StreamTransportName,
    readonly out: OpenStream,
    readonly stream: AsyncGenerator<LiveResult, void, void>,
    private readonly onCut: (
      transport: StreamTransportName,
      reason: SlowConsumerCutReason,
      queuedBytes: number,
    ) => void,
  ) {}

  queuedBytes(): number {
    return this.out.res.writableLength;
  }

  /** Cuts the response as a slow consumer (once; nothing if it already ended). */
  cut(reason: SlowConsumerCutReason): void {
    if (this.out.ended) return;
    this.onCut(this.transport, reason, this.queuedBytes());
    this.out.cut();
  }
}

export function createStreamTransport(o: StreamTransportOptions): StreamTransport {
  const open = new Set<Live>();
  const documents = new ValidDocuments();
  const parseErrorReason = o.limits.executionGuards.parseErrorReason;
  let closing = false;

  const formatErrors = (errors: readonly GraphQLError[], requestId?: string): GraphQLFormattedError[] =>
    o.limits.executionGuards.finishErrors(
      errors.map((e) =>
        formatGraphQLError(e, {
          parseErrorReason,
          onUnexpected: (err, path) => o.logger.error({ err, requestId, path }, 'unexpected error in a subscription'),
        }),
      ),
    );
  const jsonOf = (r: LiveResult, requestId?: string): string =>
    r instanceof SerializedResult
      ? r.json
      : JSON.stringify(r.errors ? { ...r, errors: formatErrors(r.errors, requestId) } : r);

  /** Counted with graphql-ws's refusals: one per error, by its code. */
  const countRefusal = (code: string): void => void o.metrics.wsRefusals.inc({ code });

  /** A subscription that never started: its errors as the one result, then the end. */
  const refuse = (out: OpenStream, errors: readonly GraphQLError[], requestId?: string): void => {
    const formatted = formatErrors(errors, requestId);
    for (const e of formatted) countRefusal(errorCodeOf(e));
    out.open();
    out.write(out.protocol.next(JSON.stringify({ errors: formatted })));
    out.end(out.protocol.complete);
  };

  /** A start refused because the gateway is stopping: the protocol's restart, so the client resubscribes elsewhere. */
  const refuseClosing = (out: OpenStream): void => {
    countRefusal(RESTART.code);
    out.open();
    out.end(out.protocol.restart(RESTART.code, RESTART.message, retryMs()));
  };

  /** Logs and counts a stream cut as a slow consumer. */
  const countCut = (transport: StreamTransportName, reason: SlowConsumerCutReason, queuedBytes: number): void => {
    o.logger.info(
      { stream: transport, queuedBytes, reason, max: o.maxBufferedBytes },
      'subscription stream cut: slow consumer',
    );
    o.metrics.slowConsumerCuts.inc({ transport, reason });
  };

  o.metrics.observeStreams({
    subscriptions: () => {
      const n = { sse: 0, multipart: 0 };
      for (const l of open) if (!l.out.ended) n[l.transport]++;
      return n;
    },
    queueBytes: () => {
      const q: Record<StreamTransportName, QueueBytes> = { sse: { max: 0, sum: 0 }, multipart: { max: 0, sum: 0 } };
      for (const l of open) {
        const bytes = l.out.ended ? 0 : l.queuedBytes();
        q[l.transport].max = Math.max(q[l.transport].max, bytes);
        q[l.transport].sum += bytes;
      }
      return q;
    },
  });

  /** Writes the hub's results until its stream ends; returns once it has. */
  const pump = async (live: Live, requestId?: string): Promise<void> => {
    const { out, stream } = live;
    try {
      for (;;) {
        const r = await stream.next();
        if (r.done) return out.end(out.protocol.complete);
        const v = r.value;
        if (v instanceof SerializedResult && v.json.length >= SHARED_MIN_LENGTH) out.writeAround(bytesOf(v));
        else out.write(out.protocol.next(jsonOf(v, requestId)));
        // Cut or gone while writing: the hub's place goes back now, not at the next event.
        if (out.ended) return void (await stream.return(undefined));
      }
    } catch (err) {
      if (isSlowConsumer(err)) return live.cut('hub');
      o.logger.error({ err, requestId }, 'live stream failed');
      out.end(out.protocol.restart('INTERNAL_SERVER_ERROR', 'the subscription failed: subscribe again', retryMs()));
    }
  };

  return {
    accepts: (req) => streamKindOf(req.headers.accept) !== undefined,
    answersAsEvents: (req) => wantsEventsOnly(req.headers.accept),
    sendResult(res, json) {
      const out = new OpenStream(res, SSE, o.maxBufferedBytes, () => undefined);
      out.open();
      out.write(SSE.next(json));
      out.end(SSE.complete);
    },

    async serve(req, res, params) {
      // As graphql-ws's upgrade: another site's page (an EventSource GET needs no preflight) gets no stream.
      if (!o.origins.allows(req.headers.origin, req.headers.host)) {
        countRefusal(ORIGIN_NOT_ALLOWED);
        return sendJson(res, 403, originRefusalBody());
      }
      const transport: StreamTransportName = streamKindOf(req.headers.accept) === 'multipart' ? 'multipart' : 'sse';
      const protocol: StreamProtocol = transport === 'multipart' ? MULTIPART : SSE;
      const out = new OpenStream(res, protocol, o.maxBufferedBytes, (queued) => countCut(transport, 'queue', queued));
      if (closing) return refuseClosing(out);
      const requestId = typeof req.headers['x-request-id'] === 'string' ? req.headers['x-request-id'] : undefined;
      let credentials;
      try {
        credentials = credentialsFromHeaders(req.headers, o.services.registry);
      } catch (err) {
        // As HTTP answers a bad credential header: 400, before any stream.
        if (!(err instanceof BadUserInputError)) throw err;
        const error = formatGraphQLError(toGraphQLError(err));
        countRefusal(errorCodeOf(error));
        return sendJson(res, 400, { errors: [error] });
      }
      const payload = payloadOf(params);
      if (payload instanceof BadUserInputError) return refuse(out, [toGraphQLError(payload)], requestId);
      // Trusted documents were screened by the edge: the text here is the listed one.
      const checked = checkOperation(payload, { schema: o.schema, limits: o.limits, documents });
      if (Array.isArray(checked)) return refuse(out, checked, requestId);
      const op = checked;
      if (!o.hub) return refuse(out, [toGraphQLError(new SubscriptionsUnavailableError())], requestId);

      // Cancels the start when the client goes away while the hub is starting it.
      const abort = new AbortController();
      res.once('close', () => abort.abort());
      const contextValue = createExecutionContext(o.services, {
        credentials,
        requestId,
        limits: o.limits.executionGuards.createExecutionLimits(abort.signal),
      });
      const bytes =
        Buffer.byteLength(op.query) +
        Buffer.byteLength(op.operationName ?? '') +
        (op.variableValues ? Buffer.byteLength(JSON.stringify(op.variableValues)) : 0);
      const address = addressBucket(clientAddress(req.headers, req.socket.remoteAddress, o.trustProxyHops));
      let result: Awaited<ReturnType<LiveHub['subscribe']>>;
      try {
        result = await o.hub.subscribe(
          {
            schema: o.schema,
            document: op.document,
            operationName: op.operationName,
            variableValues: op.variableValues,
            contextValue,
          },
          { address, bytes },
        );
      } catch (err) {
        const u = unexpectedCause(err);
        if (u) o.logger.error({ err: u.cause, requestId }, 'live hub failed to start a subscription');
        result = { errors: [toGraphQLError(u ? new InternalError(u.cause) : err)] };
      } finally {
        contextValue.limits.end();
      }
      if (!isStream(result)) return refuse(out, result.errors ?? [], requestId);
      const live = new Live(transport, out, result, countCut);
      // Gone while the hub was starting: its place goes back at once.
      if (out.ended || closing) {
        if (closing && !out.ended) refuseClosing(out);
        return void (await result.return(undefined));
      }
      open.add(live);
      out.queue = o.queues.track(address, live);
      // The client going away ends the hub's stream: its budget place goes back.
      res.once('close', () => {
        open.delete(live);
        if (!out.ended) out.cut();
        live.stream
          .return(undefined)
          .catch((err: unknown) => o.logger.warn({ err, requestId }, 'live stream failed to end cleanly'));
      });
      o.logger.debug({ stream: transport, requestId, operation: op.operationName }, 'subscription stream started');
      out.open();
      await pump(live, requestId);
    },

    async close(waitMs) {
      closing = true;
      const all = [...open];
      const gone = Promise.all(
        all.filter((l) => !l.out.res.closed).map((l) => new Promise<void>((r) => l.out.res.once('close', () => r()))),
      );
      for (const l of all) {
        l.out.end(l.out.protocol.restart(RESTART.code, RESTART.message, retryMs()));
        // Ended by us: the socket may stay for keep-alive, the subscription goes now.
        open.delete(l);
        l.stream.return(undefined).catch(() => undefined);
      }
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([gone, new Promise<void>((r) => (timer = setTimeout(r, waitMs)))]);
      clearTimeout(timer);
      for (const l of all) if (!l.out.res.closed) l.out.res.destroy();
    },
  };
}

/** The request's parameters as graphql-ws's subscribe payload. */
function payloadOf(p: OperationParams): SubscribePayload | BadUserInputError {
  const isObject = (v: unknown): v is Record<string, unknown> =>
    typeof v === 'object' && v !== null && !Array.isArray(v);
  if (typeof p.query !== 'string') return new BadUserInputError('query must be a string', 'query');
  if (p.operationName != null && typeof p.operationName !== 'string')
    return new BadUserInputError('operationName must be a string', 'operationName');
  if (p.variables != null && !isObject(p.variables))
    return new BadUserInputError('variables must be an object', 'variables');
  if (p.extensions != null && !isObject(p.extensions))
    return new BadUserInputError('extensions must be an object', 'extensions');
  return {
    query: p.query,
    operationName: p.operationName ?? null,
    variables: p.variables ?? null,
    extensions: p.extensions ?? null,
  };
}

function isStream(r: unknown): r is AsyncGenerator<LiveResult, void, void> {
  return (
    typeof r === 'object' &&
    r !== null &&
    typeof (r as { [Symbol.asyncIterator]?: unknown })[Symbol.asyncIterator] === 'function'
  );
}
