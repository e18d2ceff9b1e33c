/**
 * Checks on a GraphQL request's parameters before execution, transport-neutral:
 * - automatic persisted queries: a `query` sent with `extensions.persistedQuery.sha256Hash` must
 *   hash to it, in lower-case hex as Apollo compares it (checked here, so the answer is a typed PERSISTED_QUERY_HASH_MISMATCH, not the
 *   uncoded error Apollo throws);
 * - trusted documents (when on): the document is taken from the list by `documentId` or
 *   `extensions.persistedQuery.sha256Hash`; a free-form `query` is served only when its exact
 *   text is in the list (unless ids are required), anything else is refused;
 * - a `subscription` is found ({@link selectsSubscription}): served as a stream when the request accepts one (server/streams/), else refused ({@link SubscriptionOverHttpError}); graphql-ws skips it.
 */
import { EdgeError, EdgeErrorCode } from './errors';
import { operationKind } from './operation-kind';
import type { TrustedDocumentsConfig } from './config';
import { sha256Hex } from './trusted-documents';

/** The GraphQL request parameters as sent (GraphQL over HTTP names), values not yet checked. */
export interface OperationParams {
  query?: unknown;
  operationName?: unknown;
  variables?: unknown;
  extensions?: unknown;
  /** GraphQL over HTTP persisted documents (draft): the id of a trusted document. */
  documentId?: unknown;
}

function persistedHash(extensions: unknown): string | undefined {
  const pq =
    typeof extensions === 'object' && extensions !== null
      ? (extensions as Record<string, unknown>).persistedQuery
      : undefined;
  const hash = typeof pq === 'object' && pq !== null ? (pq as Record<string, unknown>).sha256Hash : undefined;
  return typeof hash === 'string' ? hash : undefined;
}

/** `extensions` without `persistedQuery`: a resolved trusted document must not be registered as an APQ. */
function withoutPersistedQuery(extensions: unknown): unknown {
  if (typeof extensions !== 'object' || extensions === null || Array.isArray(extensions)) return extensions;
  const { persistedQuery: _, ...rest } = extensions as Record<string, unknown>;
  return Object.keys(rest).length === 0 ? undefined : rest;
}

/**
 * The parameters to execute: unchanged, or with the trusted document filled in as `query`.
 * @throws EdgeError with the code saying why the request is refused
 */
export function screenOperation(params: OperationParams, trusted?: TrustedDocumentsConfig): OperationParams {
  const hash = persistedHash(params.extensions);
  const query = typeof params.query === 'string' ? params.query : undefined;
  // The query's hash, computed once (the body may be 1 MiB) for the APQ check and the trusted list.
  let queryHash: string | undefined;
  const hashOfQuery = (q: string): string => (queryHash ??= sha256Hex(q));
  if (query !== undefined && hash !== undefined && hashOfQuery(query) !== hash) {
    throw new EdgeError(
      EdgeErrorCode.PersistedQueryHashMismatch,
      400,
      'extensions.persistedQuery.sha256Hash is not the SHA-256 of the query text',
    );
  }
  if (!trusted) return params;
  const documentId = typeof params.documentId === 'string' && params.documentId !== '' ? params.documentId : undefined;
  if (documentId !== undefined) {
    if (query !== undefined)
      throw new EdgeError(EdgeErrorCode.BadRequest, 400, 'send either documentId or query, not both');
    const body = trusted.documents.byId(documentId);
    if (body === undefined)
      throw new EdgeError(
        EdgeErrorCode.PersistedQueryNotFound,
        400,
        `no trusted document has the id ${JSON.stringify(documentId.slice(0, 100))}`,
      );
    const { documentId: _, ...rest } = params;
    return { ...rest, query: body, extensions: withoutPersistedQuery(params.extensions) };
  }
  if (query !== undefined) {
    if (trusted.requireId)
      throw new EdgeError(
        EdgeErrorCode.PersistedQueryIdRequired,
        400,
        'this gateway serves trusted documents only, by id: send documentId (or extensions.persistedQuery.sha256Hash) instead of query',
      );
    if (!trusted.documents.hasHash(hashOfQuery(query)))
      throw new EdgeError(
        EdgeErrorCode.PersistedQueryNotInList,
        400,
        'this gateway serves trusted documents only, and this document is not one of them',
      );
    return { ...params, extensions: withoutPersistedQuery(params.extensions) };
  }
  if (hash !== undefined) {
    const body = trusted.documents.byId(hash);
    // 200, as Apollo answers an APQ miss: APQ clients then resend the text, which is checked above.
    if (body === undefined)
      throw new EdgeError(
        EdgeErrorCode.PersistedQueryNotFound,
        200,
        'PersistedQueryNotFound: no trusted document has this hash',
      );
    return { ...params, query: body, extensions: withoutPersistedQuery(params.extensions) };
  }
  // Nothing to run: GraphQL execution answers that the query is missing.
  return params;
}

/** Whether the operation `params` select is a subscription (by lexing; undefined kinds are not). */
export function selectsSubscription(params: OperationParams): boolean {
  if (typeof params.query !== 'string' || !params.query.includes('subscription')) return false;
  const name = typeof params.operationName === 'string' ? params.operationName : undefined;
  return operationKind(params.query, name) === 'subscription';
}

/** 400 SUBSCRIPTION_NOT_SUPPORTED_OVER_HTTP: a subscription asked for as a plain JSON answer. */
export class SubscriptionOverHttpError extends EdgeError {
  constructor() {
    super(
      EdgeErrorCode.SubscriptionOverHttp,
      400,
      'subscriptions are not served as a JSON answer: ask for a stream (Accept: text/event-stream, or multipart/mixed;subscriptionSpec=1.0) or use graphql-ws',
    );
  }
}
