/**
 * The socket layer's close codes and typed errors. graphql-ws's own codes (4400, 4401, 4403,
 * 4406, 4408, 4409, 4429, 4500) are the library's; the ones below are the gateway's, chosen so
 * that graphql-ws's client retries them (its fatal list is 4500, 4005, 4400, 4004, 4401, 4406,
 * 4409, 4429 and 1000–1999 except 1000, 1001, 1005, 1006, 1012, 1013, 1014). docs/subscriptions.md
 * ("Transport") has the table.
 */
import { ErrorCode, GatewayError } from '../../adapters/contract/errors';

export const WsCloseCode = {
  /** Shutdown (SIGTERM): reconnect, to this or another replica, and resume from your cursor. */
  ServiceRestart: 1012,
  /** The socket's outgoing queue passed `maxBufferedBytes`, or the hub dropped it as a slow consumer. */
  SlowConsumer: 4413,
  /** graphql-ws's: an unexpected server error. */
  InternalServerError: 4500,
  /** graphql-ws's: bad `connection_init` payload (the reason says what). */
  Forbidden: 4403,
  /** graphql-ws's: a message the protocol does not allow here. */
  BadRequest: 4400,
} as const;

/** Close reasons must fit a control frame (123 bytes); longer ones are cut. */
export function closeReason(text: string): string {
  const b = Buffer.from(text, 'utf8');
  return b.length <= 123
    ? text
    : b
        .subarray(0, 120)
        .toString('utf8')
        .replace(/\uFFFD+$/, '') + '...';
}

/** Longest subscription id, in characters: graphql-ws clients send UUIDs (36) or counters. */
export const MAX_SUBSCRIPTION_ID_LENGTH = 128;

/** A query or mutation over graphql-ws. */
export class NotSupportedOverWebSocketError extends GatewayError {
  constructor(kind: string) {
    super(
      ErrorCode.OperationNotSupportedOverWebSocket,
      `a ${kind} is not served over graphql-ws: send it with HTTP POST to the same URL; the socket serves subscriptions only`,
    );
  }
}

/** No live hub is configured: nothing can feed a subscription. */
export class SubscriptionsUnavailableError extends GatewayError {
  constructor() {
    super(
      ErrorCode.SubscriptionsUnavailable,
      'this gateway serves no subscriptions yet (no live hub is running); poll with queries over HTTP instead',
    );
  }
}

/** Why an upgrade was refused before it happened: answered as HTTP `status` with a GraphQL error body. */
export class UpgradeRefusal extends Error {
  constructor(
    readonly status: 403 | 404 | 429 | 503,
    readonly code: 'ORIGIN_NOT_ALLOWED' | 'NOT_FOUND' | 'TOO_MANY_CONNECTIONS' | 'SHUTTING_DOWN',
    message: string,
  ) {
    super(message);
    this.name = 'UpgradeRefusal';
  }
}

/** The hub's `SlowConsumerError` (subscriptions/live), recognised by its code. */
export const SLOW_CONSUMER_CODE = 'SLOW_CONSUMER';
export const isSlowConsumer = (err: unknown): boolean =>
  err instanceof Error && (err as { code?: unknown }).code === SLOW_CONSUMER_CODE;
