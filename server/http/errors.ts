/**
 * Errors answered at the edge, before a request reaches GraphQL execution: limits on callers,
 * request bodies and headers, trusted documents, persisted-query hashes and operation kinds. Each
 * carries its HTTP status and a stable `extensions.code`. They are request errors (the response
 * has no `data`), unlike the resolver errors of `adapters/contract/errors.ts`, so they have their own
 * class; the body has the same GraphQL error shape.
 */
import type { RateLimitKind, RateLimitScope } from '../../domain/caller-limiter';

/** Stable codes of edge errors, sent as `extensions.code`. docs/troubleshooting.md lists them. */
export enum EdgeErrorCode {
  /** 429: the caller (or its address) is over its request rate or its in-flight cap. */
  RateLimited = 'RATE_LIMITED',
  /** 413: the request body is over `MAX_BODY_BYTES`. */
  PayloadTooLarge = 'PAYLOAD_TOO_LARGE',
  /** 431: the request headers are over `MAX_HEADER_BYTES`. */
  HeadersTooLarge = 'REQUEST_HEADERS_TOO_LARGE',
  /** 400: the request is not valid HTTP or not valid JSON. */
  BadRequest = 'BAD_REQUEST',
  /** 408: the request did not arrive in time. */
  RequestTimeout = 'REQUEST_TIMEOUT',
  /** 429: the peer address has `MAX_CONNECTIONS_PER_ADDRESS` TCP connections open; this one is closed. */
  TooManyConnections = 'TOO_MANY_CONNECTIONS',
  /** 400: trusted documents are on and the free-form document is not in the list. */
  PersistedQueryNotInList = 'PERSISTED_QUERY_NOT_IN_LIST',
  /** 400: trusted documents require an id (`TRUSTED_DOCUMENTS_REQUIRE_ID`) and a free-form document was sent. */
  PersistedQueryIdRequired = 'PERSISTED_QUERY_ID_REQUIRED',
  /** 400 (`documentId`) or 200 (`extensions.persistedQuery`, as Apollo answers APQ misses): no trusted document has that id. */
  PersistedQueryNotFound = 'PERSISTED_QUERY_NOT_FOUND',
  /** 400: `extensions.persistedQuery.sha256Hash` is not the SHA-256 of `query`. */
  PersistedQueryHashMismatch = 'PERSISTED_QUERY_HASH_MISMATCH',
  /** 400: a `subscription` arrived over HTTP asking for a JSON answer; it is served as an SSE or multipart stream, or over graphql-ws. */
  SubscriptionOverHttp = 'SUBSCRIPTION_NOT_SUPPORTED_OVER_HTTP',
  /** 400: CSRF prevention (`CSRF_PREVENTION`) refused a request a cross-site page could send without a preflight. */
  CsrfPreflightRequired = 'CSRF_PREFLIGHT_REQUIRED',
  /** 413: an HTTP batch holds more operations than `MAX_BATCH_SIZE` (or batching is off). */
  BatchTooLarge = 'BATCH_TOO_LARGE',
}

/** An error answered by the edge with `status`; `extensions` adds machine-readable details to the code. */
export class EdgeError extends Error {
  constructor(
    readonly code: EdgeErrorCode,
    readonly status: number,
    message: string,
    readonly extensions: Record<string, unknown> = {},
    /** Response headers that go with it, e.g. `retry-after`. */
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = 'EdgeError';
  }

  /** The GraphQL response body: one error, no `data`. */
  toBody(): { errors: Array<{ message: string; extensions: Record<string, unknown> }> } {
    return { errors: [{ message: this.message, extensions: { code: this.code, ...this.extensions } }] };
  }
}

/** 429 with `Retry-After`: a caller is over one of its limits. */
export class RateLimitedError extends EdgeError {
  constructor(
    readonly limit: RateLimitKind,
    readonly scope: RateLimitScope,
    readonly retryAfterSeconds: number,
  ) {
    const what = limit === 'requestRate' ? 'request rate' : 'number of concurrent requests';
    const whose = scope === 'caller' ? 'this caller' : "this caller's network address";
    super(
      EdgeErrorCode.RateLimited,
      429,
      `too many requests: the ${what} of ${whose} is over its limit; retry after ${retryAfterSeconds} s`,
      { limit, scope, retryAfterSeconds },
      { 'retry-after': String(retryAfterSeconds) },
    );
  }
}
