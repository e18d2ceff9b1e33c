/**
 * graphql-ws on `ws`, on the HTTP server's port and path (docs/subscriptions.md, "Transport").
 * graphql-ws's `makeServer` runs the protocol (its messages, its close codes); this module gives
 * it sockets (server/ws/socket.ts) and its hooks: the upgrade checks (upgrade.ts), credentials
 * from the upgrade's headers and `connection_init` (connection-init.ts), the operation checks
 * HTTP applies (operation.ts), the per-socket quota (quotas.ts; the limits across sockets are the hub's budget, which this
 * transport charges with the client address and the bytes a subscription keeps), the hub's
 * streams (stream.ts) whose shared bytes are written as they are (shared-bytes.ts), and the open
 * sockets' keep-alive and shutdown (open-sockets.ts).
 */
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import {
  execute,
  GraphQLError,
  type ExecutionArgs,
  type ExecutionResult,
  type GraphQLFormattedError,
  type GraphQLSchema,
} from 'graphql';
import { makeServer, type Context } from 'graphql-ws';
import WebSocket, { WebSocketServer } from 'ws';
import { BadUserInputError } from '../../adapters/contract/errors';
import {
  errorCodeOf,
  formatGraphQLError,
  InternalError,
  toGraphQLError,
  unexpectedCause,
} from '../../adapters/contract/graphql-errors';
import { SerializedResult, type LiveHub, type LiveResult } from '../../subscriptions/live/types';
import { createExecutionContext, type GatewayContext, type GatewayServices } from '../../domain/context';
import type { TrustedDocumentsConfig } from '../http/config';
import type { OriginRule } from '../http/origin';
import type { OperationLimits } from '../limits';
import type { Logger } from '../logger';
import type { GatewayMetrics } from '../metrics';
import type { WsConfig } from './config';
import { pickCredentialHeaders } from '../credentials';
import { readConnectionInit } from './connection-init';
import { MAX_SUBSCRIPTION_ID_LENGTH, SubscriptionsUnavailableError, UpgradeRefusal, WsCloseCode } from './errors';
import { addressBucket } from '../http/caller-identity';
import { checkOperation, ValidDocuments } from './operation';
import { SocketQuota } from './quotas';
import { NextFrames } from './shared-bytes';
import { OpenSockets } from './open-sockets';
import type { QueueBudget } from './queue-budget';
import {
  closeSocket,
  cutSlowConsumer,
  graphqlWsSocket,
  newSocketState,
  SocketQueue,
  writeFrame,
  type SocketHooks,
  type SocketState,
} from './socket';
import { GuardedStream, type StreamHooks } from './stream';
import { refuseUpgrade, UpgradeGate } from './upgrade';
import { extractTraceContext, wsOperationSpan } from '../tracing/operation';
import type { Context as TraceContext } from '@opentelemetry/api';

export { loadWsConfig, resolveWsOptions, WS_DEFAULTS, type WsConfig, type WsOptions } from './config';
export { WsCloseCode } from './errors';

export interface WsTransportOptions {
  config: WsConfig;
  /** The path served, the same as HTTP's. */
  path: string;
  /** See `HttpEdgeConfig.trustProxyHops`. */
  trustProxyHops: number;
  /** Which browser origins may open a socket: the rule every transport applies (server/http/origin.ts). */
  origins: OriginRule;
  /** The executable schema, wrapped by `limits`. */
  schema: GraphQLSchema;
  limits: OperationLimits;
  trusted?: TrustedDocumentsConfig;
  services: GatewayServices;
  /** Feeds subscriptions; without one every subscription gets SUBSCRIPTIONS_UNAVAILABLE. */
  hub?: LiveHub;
  /** The bytes each client address may have queued, shared with the HTTP streams (`maxBufferedBytesPerAddress`). */
  queues: QueueBudget;
  logger: Logger;
  metrics: GatewayMetrics;
}

export interface WsTransport {
  /** The HTTP server's `upgrade` listener. */
  handleUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void;
  /**
   * Refuses new sockets, closes every open one with 1012 (service restart: resume elsewhere from
   * your cursor) and resolves once all are closed; those still open after `waitMs` are cut.
   */
  close(waitMs: number): Promise<void>;
}

/** What a subscription's context carries for the transport's own bookkeeping. */
interface Started {
  state: SocketState;
  id: string;
  /** Cancels the start. */
  abort: AbortController;
  /** Bytes of client text the subscription keeps (the hub's per-address budget). */
  bytes: number;
}

export function createWsTransport(o: WsTransportOptions): WsTransport {
  const c = o.config;
  const wss = new WebSocketServer({
    noServer: true,
    maxPayload: c.maxPayloadBytes,
    clientTracking: false,
    perMessageDeflate: false,
    handleProtocols: (protocols) => (protocols.has('graphql-transport-ws') ? 'graphql-transport-ws' : false),
  });
  const gate = new UpgradeGate({
    path: o.path,
    origins: o.origins,
    maxConnectionsPerAddress: c.maxConnectionsPerAddress,
    maxConnections: c.maxConnections,
    trustProxyHops: o.trustProxyHops,
  });
  const sockets = new OpenSockets(c.keepAliveMs, o.logger);
  const started = new WeakMap<object, Started>();
  const documents = new ValidDocuments();
  const socketHooks: SocketHooks = {
    maxBufferedBytes: c.maxBufferedBytes,
    logger: o.logger,
    onDropped: () => o.metrics.wsDropped.inc(),
    onCut: (reason) => o.metrics.slowConsumerCuts.inc({ transport: 'ws', reason }),
  };

  const parseErrorReason = o.limits.executionGuards.parseErrorReason;
  /** The errors of one subscription in the wire format HTTP uses; unexpected ones logged with the request id, when one was made. */
  const formatErrors = (
    errors: readonly GraphQLError[],
    socket: number,
    id: string,
    requestId?: string,
  ): GraphQLFormattedError[] =>
    o.limits.executionGuards.finishErrors(
      errors.map((e) =>
        formatGraphQLError(e, {
          parseErrorReason,
          onUnexpected: (err, path) =>
            o.logger.error({ err, socket, subscription: id, requestId, path }, 'unexpected error in a subscription'),
        }),
      ),
    );

  /** The subscription's place, signal and quota go, once. */
  const release = (s: SocketState, id: string): void => {
    s.quota?.release(id);
    s.active.get(id)?.abort();
    s.active.delete(id);
  };

  /** One live subscription's stream hooks: methods, not closures, since thousands are open at once. */
  class LiveSubscription implements StreamHooks {
    readonly #frames: NextFrames;

    constructor(
      readonly s: SocketState,
      readonly id: string,
    ) {
      this.#frames = new NextFrames(id);
    }

    sendShared(r: SerializedResult): void {
      writeFrame(this.s, socketHooks, this.#frames.frame(r));
    }

    onEnd(): void {
      release(this.s, this.id);
    }

    onSlowConsumer(): void {
      cutSlowConsumer(this.s, socketHooks, 'hub');
    }

    onReturnError(err: unknown): void {
      o.logger.warn({ err, socket: this.s.id }, 'live stream failed to end cleanly');
    }
  }

  const server = makeServer<Record<string, unknown>, SocketState>({
    schema: o.schema,
    connectionInitWaitTimeout: c.connectionInitTimeoutMs,
    onConnect(ctx: Context<Record<string, unknown>, SocketState>) {
      const s = ctx.extra;
      try {
        s.caller = readConnectionInit(ctx.connectionParams, {
          registry: o.services.registry,
          maxBytes: c.maxInitPayloadBytes,
          upgrade: s.upgradeCredentials,
        });
        s.upgradeCredentials = undefined;
      } catch (err) {
        if (!(err instanceof BadUserInputError)) throw err;
        o.metrics.wsRefusals.inc({ code: 'BAD_CONNECTION_INIT' });
        // Our reason; graphql-ws's own close after `false` ("Forbidden") then finds it closing.
        closeSocket(s, WsCloseCode.Forbidden, `Forbidden: ${err.message}`);
        return false;
      }
      s.quota = new SocketQuota(c.maxSubscriptionsPerSocket);
      return true;
    },
    onSubscribe(ctx, id, payload) {
      const s = ctx.extra;
      const refuse = (errors: readonly GraphQLError[]): readonly GraphQLError[] => {
        // Counted only: graphql-ws sends them through onError, which formats (and logs) them.
        for (const e of errors)
          o.metrics.wsRefusals.inc({ code: errorCodeOf(formatGraphQLError(e, { parseErrorReason })) });
        return errors;
      };
      // An id is kept for the subscription's life and echoed in every frame: bounded like a message field.
      if (id.length > MAX_SUBSCRIPTION_ID_LENGTH) {
        o.metrics.wsRefusals.inc({ code: 'SUBSCRIPTION_ID_TOO_LONG' });
        closeSocket(
          s,
          WsCloseCode.BadRequest,
          `Invalid message received: subscription id is over ${MAX_SUBSCRIPTION_ID_LENGTH} characters`,
        );
        return [new GraphQLError('subscription id too long')];
      }
      const checked = checkOperation(payload, { schema: o.schema, limits: o.limits, trusted: o.trusted, documents });
      if (Array.isArray(checked)) return refuse(checked);
      const op = checked;
      if (!o.hub) return refuse([toGraphQLError(new SubscriptionsUnavailableError())]);
      const over = s.quota!.acquire(id);
      if (over) return refuse([toGraphQLError(over)]);
      // The same text as the cached document's, as one string: graphql-ws keeps its message's
      // payload for the subscription's life, and documents are often kilobytes.
      if (payload.query === op.query) (payload as { query: string }).query = op.query;
      const abort = new AbortController();
      s.active.set(id, abort);
      const contextValue = createExecutionContext(o.services, {
        credentials: s.caller!.credentials,
        // The deadline, budget and meter cover the subscription's start (hub.subscribe); the
        // hub's per-event executions need limits of their own.
        limits: o.limits.executionGuards.createExecutionLimits(abort.signal),
      });
      const bytes =
        Buffer.byteLength(id) +
        Buffer.byteLength(payload.query) +
        Buffer.byteLength(op.operationName ?? '') +
        (op.variableValues ? Buffer.byteLength(JSON.stringify(op.variableValues)) : 0);
      started.set(contextValue, { state: s, id, abort, bytes });
      o.logger.debug(
        { socket: s.id, requestId: contextValue.requestId, operation: op.operationName },
        'subscription started',
      );
      return {
        schema: o.schema,
        document: op.document,
        operationName: op.operationName,
        variableValues: op.variableValues,
        contextValue,
      };
    },
    async subscribe(args: ExecutionArgs) {
      const ctx = args.contextValue as GatewayContext;
      const { state: s, id, abort, bytes } = started.get(ctx)!;
      let result: Awaited<ReturnType<LiveHub['subscribe']>>;
      try {
        // The start's span (server/tracing), child of the upgrade's `traceparent`.
        result = await wsOperationSpan(s.trace, args, () =>
          o.hub!.subscribe(args, { address: addressBucket(s.address), bytes }),
        );
      } catch (err) {
        // Logged here, not by the formatter: graphql-ws sends (and formats) nothing once the client has completed.
        const u = unexpectedCause(err);
        if (u)
          o.logger.error(
            { err: u.cause, socket: s.id, subscription: id, requestId: ctx.requestId },
            'live hub failed to start a subscription',
          );
        result = { errors: [toGraphQLError(u ? new InternalError(u.cause) : err)] };
      } finally {
        ctx.limits.end();
        // The signal only ever cancelled the start; the stream ends through its `return()`.
        if (s.active.get(id) === abort) s.active.delete(id);
      }
      if (!isStream(result)) {
        // The hub's refusals (its budget, credentials, cursors) count with the socket layer's.
        for (const e of result.errors ?? []) o.metrics.wsRefusals.inc({ code: errorCodeOf(e) });
        return result;
      }
      // graphql-ws keeps these args for the stream's life and reads nothing of the context again:
      // let the start's context (credentials aside, which the hub kept) go now, not at the end.
      (args as { contextValue?: unknown }).contextValue = undefined;
      // Closed or completed while the hub was starting: graphql-ws returns the stream at once.
      return new GuardedStream(result, new LiveSubscription(s, id)) as unknown as AsyncGenerator<ExecutionResult>;
    },
    // Queries and mutations over the socket: graphql-js's own execute, in the operation's span.
    execute: (args: ExecutionArgs) =>
      wsOperationSpan(started.get(args.contextValue as object)?.state.trace, args, async () => execute(args)),
    // Shared results never get here (the stream guard writes them); a subscriber's own results do.
    onNext(ctx, id, _payload, args, result) {
      return result.errors
        ? {
            ...result,
            errors: formatErrors(
              result.errors,
              ctx.extra.id,
              id,
              (args.contextValue as GatewayContext | undefined)?.requestId,
            ),
          }
        : undefined;
    },
    onError: (ctx, id, _payload, errors) => formatErrors(errors, ctx.extra.id, id),
    onComplete: (ctx, id) => release(ctx.extra, id),
  });

  const onConnection = (
    ws: WebSocket,
    address: string,
    credentials: Record<string, string>,
    trace: TraceContext,
  ): void => {
    const s = newSocketState(ws, address, trace);
    if (Object.keys(credentials).length > 0) s.upgradeCredentials = credentials;
    sockets.add(s);
    s.queue = o.queues.track(addressBucket(address), new SocketQueue(s, socketHooks));
    ws.on('pong', () => (s.alive = true));
    ws.on('error', (err) => o.logger.debug({ err: err.message, socket: s.id }, 'websocket error'));
    const closed = server.opened(graphqlWsSocket(s, socketHooks), s);
    // `on`, not `once`: 'close' comes once, and a once-wrapper is two more objects per socket.
    ws.on('close', (code, reason) => {
      sockets.delete(s);
      s.queue?.untrack();
      o.metrics.wsCloses.inc({ code: String(s.closeCode ?? code) });
      // graphql-ws returns every open stream; the quota goes with the socket whatever happens.
      closed(code, reason.toString())
        .catch((err: unknown) => o.logger.warn({ err, socket: s.id }, "closing a socket's subscriptions failed"))
        .finally(() => {
          for (const id of [...s.active.keys()]) release(s, id);
          s.quota?.releaseAll();
        });
    });
  };

  o.metrics.observeWebSockets({
    connections: () => sockets.size,
    subscriptions: () => o.hub?.counts() ?? {},
    queueBytes: () => sockets.queueBytes(),
  });

  return {
    handleUpgrade(req, socket, head) {
      socket.on('error', () => socket.destroy());
      let admission;
      try {
        admission = gate.admit(req, new URL(req.url ?? '/', 'http://gateway.invalid'));
      } catch (err) {
        if (!(err instanceof UpgradeRefusal)) throw err;
        o.metrics.wsRefusals.inc({ code: err.code });
        return refuseUpgrade(socket, err);
      }
      // Released when the TCP socket goes, whether or not the handshake succeeded.
      socket.on('close', () => admission.release());
      const address = admission.address;
      // Read here, not in the callback: a closure naming `req` would keep every socket's upgrade
      // request alive through this scope's other closures (bench/heap.ts saw one per subscription).
      const credentials = pickCredentialHeaders(req.headers);
      const trace = extractTraceContext(req.headers);
      wss.handleUpgrade(req, socket, head, (ws) => onConnection(ws, address, credentials, trace));
    },
    async close(waitMs) {
      gate.close();
      await sockets.closeAll(waitMs);
    },
  };
}

function isStream(r: unknown): r is AsyncGenerator<LiveResult, void, void> {
  return (
    typeof r === 'object' &&
    r !== null &&
    typeof (r as { [Symbol.asyncIterator]?: unknown })[Symbol.asyncIterator] === 'function'
  );
}
