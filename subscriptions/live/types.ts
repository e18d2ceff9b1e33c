/**
 * The live path's seams (docs/subscriptions.md): the socket layer (`server/ws/`) hands each
 * subscription to the {@link LiveHub}; the hub matches changes to subscribers, authorizes them,
 * executes once per distinct (event, document, variables, access scope) and yields the same
 * serialized bytes to every subscriber of a group.
 */
import type { ExecutionArgs, ExecutionResult } from 'graphql';
import type { OperationRecord } from '../../adapters/contract/model';
import type { ExecutionRequest, GatewayContext } from '../../domain/context';

/**
 * An execution result serialized once and shared by every subscriber that receives it. The socket
 * layer writes `json` as the `payload` of a graphql-ws `next` message without serializing again.
 */
export class SerializedResult {
  constructor(readonly json: string) {}
  /** For code that does not know the shared form (graphql-ws's default serializer, tests). */
  toJSON(): unknown {
    return JSON.parse(this.json) as unknown;
  }
}

/**
 * Where a stream may write shared results itself, synchronously, while its consumer waits for the
 * next one (the socket layer's writer of `next` frames): one event's fan-out then runs as one loop
 * over the sockets, with no promise per subscriber.
 */
export interface SharedSink {
  sendShared(result: SerializedResult): void;
}

/** A stream that can hand its shared results to a {@link SharedSink} (the hub's LiveStream). */
export interface SharedResultStream {
  shareTo(sink: SharedSink): void;
}

/** What a subscription yields: a shared serialized result, or a result of its own (errors). */
export type LiveResult = SerializedResult | ExecutionResult;

/** Where a subscription comes from, as its transport knows it: the key and charge of the per-address budget. */
export interface SubscriberOrigin {
  /** The client address's bucket (IPv6 by /64, server/http/caller-identity.ts `addressBucket`). */
  address: string;
  /** Bytes of client-chosen text the subscription keeps for its life: id, query, variables, operation name. */
  bytes: number;
}

/** Subscribes; what graphql-ws's `subscribe` option calls with the execution args `onSubscribe` made. */
export interface LiveHub {
  /**
   * Starts a subscription. `args.contextValue` is the subscriber's `GatewayContext` (credentials,
   * limits). Returns the stream, or an ExecutionResult with errors when it cannot start (bad
   * filter, CURSOR_EXPIRED, SUBSCRIPTION_LIMIT, UNAUTHENTICATED). The stream's `return()` ends the
   * subscription and frees everything. Every transport passes `origin`: all draw from one budget
   * per address. @param origin left out by in-process callers (tests): no per-address budget
   */
  subscribe(
    args: ExecutionArgs,
    origin?: SubscriberOrigin,
  ): Promise<AsyncGenerator<LiveResult, void, void> | ExecutionResult>;
  /** Subscriptions now open, per root field. */
  counts(): Record<string, number>;
  /** Stops watchers and ends every stream (shutdown). */
  close(): Promise<void>;
}

/**
 * Builds one execution's context (domain/context.ts `createExecutionContext` over the gateway's
 * services). Injected by the server, which holds the services.
 */
export type ContextFactory = (request: ExecutionRequest) => GatewayContext;

/**
 * The operation `id` names, if the context's caller may see it (they started it, or can read its
 * target now: the `volumeOperation` query's rule); null for an unknown or hidden one. Injected by
 * the server (the resolvers' `loadOperation`), so the live path never imports a resolver.
 * @throws GatewayError for an id that is not an operation id, or names no configured backend
 */
export type OperationVisibility = (ctx: GatewayContext, id: string) => Promise<OperationRecord | null>;
