/**
 * Typed gateway errors. Every failure that reaches a client is one of these classes; the server's
 * `formatError` turns them into GraphQL `extensions` once, at the edge. Nothing matches on messages.
 */

/** Stable machine-readable error codes, sent as `extensions.code`. */
export enum ErrorCode {
  BadUserInput = 'BAD_USER_INPUT',
  NotFound = 'NOT_FOUND',
  Conflict = 'CONFLICT',
  Forbidden = 'FORBIDDEN',
  Unauthenticated = 'UNAUTHENTICATED',
  UnsupportedByBackend = 'UNSUPPORTED_BY_BACKEND',
  BackendUnavailable = 'BACKEND_UNAVAILABLE',
  BackendTimeout = 'BACKEND_TIMEOUT',
  BackendError = 'BACKEND_ERROR',
  /** The backend refused because a quota or limit of the caller's project is used up (not an outage). */
  QuotaExceeded = 'QUOTA_EXCEEDED',
  /** The operation would need more backend calls than one operation may make (per backend). */
  RequestLimitExceeded = 'REQUEST_LIMIT_EXCEEDED',
  /** The whole operation ran past its deadline. */
  OperationTimeout = 'OPERATION_TIMEOUT',
  /** The client went away; the rest of the operation was not done (nobody reads this answer). */
  OperationCancelled = 'OPERATION_CANCELLED',
  // Operation limits, checked before execution (server/limits; Apollo Router's vocabulary).
  MaxDepthLimit = 'MAX_DEPTH_LIMIT',
  MaxAliasesLimit = 'MAX_ALIASES_LIMIT',
  MaxDirectivesLimit = 'MAX_DIRECTIVES_LIMIT',
  MaxTokensLimit = 'MAX_TOKENS_LIMIT',
  MaxIntrospectionLimit = 'MAX_INTROSPECTION_LIMIT',
  IntrospectionDisabled = 'INTROSPECTION_DISABLED',
  CostEstimatedTooExpensive = 'COST_ESTIMATED_TOO_EXPENSIVE',
  /** The answer grew past the response-size cap while executing. */
  ResponseTooLarge = 'RESPONSE_TOO_LARGE',
  /** A cursor older than the event log's retention (or from before a restart): re-list, then resume from the list. */
  CursorExpired = 'CURSOR_EXPIRED',
  /** An idempotency key was used again with a different input. */
  IdempotencyKeyReused = 'IDEMPOTENCY_KEY_REUSED',
  /** A subscriber fell further behind than its queue bound; the socket layer closes it (resume from the last cursor). */
  SlowConsumer = 'SLOW_CONSUMER',
  /** A field of a subscription event needs a backend read, which events never make (query it over HTTP). */
  NotServedInEvents = 'NOT_SERVED_IN_EVENTS',
  /** graphql-ws: a socket or a credential has as many subscriptions open as it may (server/ws). */
  SubscriptionLimit = 'SUBSCRIPTION_LIMIT',
  /** graphql-ws: a query or mutation was sent over the socket; those are served over HTTP. */
  OperationNotSupportedOverWebSocket = 'OPERATION_NOT_SUPPORTED_OVER_WEBSOCKET',
  /** graphql-ws: this gateway runs no live hub, so it serves no subscriptions. */
  SubscriptionsUnavailable = 'SUBSCRIPTIONS_UNAVAILABLE',
  Internal = 'INTERNAL_SERVER_ERROR',
}

/** Fields every gateway error carries; all but `code` are optional. */
export interface GatewayErrorDetails {
  /** Configured id of the backend the error came from, if any. */
  backend?: string;
  /** HTTP status the backend answered, if it answered. */
  httpStatus?: number;
  /** Whether the same request may succeed if retried unchanged. @default false */
  retryable?: boolean;
  /** The backend's own error text (never contains credentials: backends do not echo them). */
  backendMessage?: string;
  /** The underlying error, kept for logs only; never sent to clients. */
  cause?: unknown;
}

/**
 * A field of the input an adapter was given, named relative to that input (`nomad.plugin`,
 * `cascade`; `''` is the input itself). Adapters know no GraphQL argument: the resolver layer
 * places the field under the argument the input came from (`input.nomad.plugin`).
 */
export class InputField {
  constructor(readonly path: string) {}

  /** A field inside this one: `.plugin` or `[0]`. */
  inner(suffix: string): InputField {
    return new InputField(this.path === '' ? suffix.replace(/^\./, '') : `${this.path}${suffix}`);
  }

  toString(): string {
    return this.path;
  }
}

/** Field `path` of an adapter's input, relative to it. */
export const inputField = (path: string): InputField => new InputField(path);

/** Where a value came from: an argument path (`input.name`, resolvers) or a field relative to an adapter's input. */
export type InputPlace = string | InputField;

/** `place` and then `suffix` (`.fsType`, `[0]`), of the same sort as `place`. */
export const within = (place: InputPlace, suffix: string): InputPlace =>
  typeof place === 'string' ? `${place}${suffix}` : place.inner(suffix);

/** Names fields in a message: relative ones as the adapter knows them, or placed under an argument. */
export type FieldNamer = (field: string) => string;

const asGiven: FieldNamer = (field) => field;

/** Base class: a message for humans plus a code and details for machines. */
export class GatewayError extends Error {
  readonly code: ErrorCode;
  readonly backend?: string;
  readonly httpStatus?: number;
  readonly retryable: boolean;
  readonly backendMessage?: string;

  constructor(code: ErrorCode, message: string, details: GatewayErrorDetails = {}) {
    super(message, details.cause === undefined ? undefined : { cause: details.cause });
    this.name = new.target.name;
    this.code = code;
    this.backend = details.backend;
    this.httpStatus = details.httpStatus;
    this.retryable = details.retryable ?? false;
    this.backendMessage = details.backendMessage;
  }

  /** Writes the message while it names fields relative to an adapter's input ({@link naming}). */
  private say?: (name: FieldNamer) => string;

  /**
   * This error with its message written by `say`, which names fields of an adapter's input
   * (relative, e.g. `attachmentId`) through `name`; the resolver layer places them ({@link placed}).
   */
  naming(say: (name: FieldNamer) => string): this {
    this.say = say;
    this.message = say(asGiven);
    return this;
  }

  /**
   * A copy (same class and details) whose message names fields as `name` does (the resolver layer's
   * argument paths); this error itself when its message names no relative field.
   */
  placed(name: FieldNamer): this {
    if (!this.say) return this;
    const out = Object.assign(Object.create(Object.getPrototypeOf(this) as object) as this, this, { say: undefined });
    Object.defineProperty(out, 'message', {
      value: this.say(name),
      writable: true,
      configurable: true,
      enumerable: false,
    });
    Object.defineProperty(out, 'stack', { value: this.stack, writable: true, configurable: true, enumerable: false });
    if (this.cause !== undefined)
      Object.defineProperty(out, 'cause', { value: this.cause, writable: true, configurable: true, enumerable: false });
    return out;
  }

  /** The `extensions` object clients see. */
  toExtensions(): Record<string, unknown> {
    const ext: Record<string, unknown> = { code: this.code, retryable: this.retryable };
    if (this.backend !== undefined) ext.backend = this.backend;
    if (this.httpStatus !== undefined) ext.httpStatus = this.httpStatus;
    if (this.backendMessage !== undefined) ext.backendMessage = this.backendMessage;
    return ext;
  }
}

/** The caller's input is wrong; rejected before any backend call. */
export class BadUserInputError extends GatewayError {
  /** Name of the offending argument or input field, e.g. `id` or `input.name` (relative while {@link field} is set). */
  readonly argument?: string;
  /** The offending field relative to an adapter's input, until the resolver layer places it ({@link placed}). */
  readonly field?: string;

  /** @param argument name of the offending argument or input field, e.g. `id` or `input.name`. */
  constructor(message: string, argument?: string) {
    super(ErrorCode.BadUserInput, message);
    this.argument = argument;
  }

  /**
   * An error about `field` of an adapter's input (relative, e.g. `nomad.nativeId`; `''` is the
   * input itself); `say` writes the message, naming every field through `name`, so that once
   * placed the message names argument paths.
   */
  static atField(field: string, say: (name: FieldNamer) => string): BadUserInputError {
    return new BadUserInputError('', field).relativeTo(field, say);
  }

  /** An error about `place` whose message `say` writes around the place's name. */
  static at(place: InputPlace, say: (shown: string) => string): BadUserInputError {
    if (typeof place === 'string') return new BadUserInputError(say(place), place);
    return BadUserInputError.atField(place.path, (name) => say(name(place.path)));
  }

  /** Makes this error name `field`, relative to an adapter's input, in its argument and (through `say`) its message. */
  protected relativeTo(field: string, say: (name: FieldNamer) => string): this {
    (this as { field?: string }).field = field;
    return this.naming(say);
  }

  override placed(name: FieldNamer): this {
    const out = super.placed(name);
    if (out !== this && this.field !== undefined) Object.assign(out, { argument: name(this.field), field: undefined });
    return out;
  }

  override toExtensions(): Record<string, unknown> {
    return this.argument === undefined ? super.toExtensions() : { ...super.toExtensions(), argument: this.argument };
  }
}

export class NotFoundError extends GatewayError {
  constructor(message: string, details: GatewayErrorDetails = {}) {
    super(ErrorCode.NotFound, message, details);
  }
}

export class ConflictError extends GatewayError {
  constructor(message: string, details: GatewayErrorDetails = {}) {
    super(ErrorCode.Conflict, message, details);
  }
}

export class ForbiddenError extends GatewayError {
  constructor(message: string, details: GatewayErrorDetails = {}) {
    super(ErrorCode.Forbidden, message, details);
  }
}

export class UnauthenticatedError extends GatewayError {
  constructor(message: string, details: GatewayErrorDetails = {}) {
    super(ErrorCode.Unauthenticated, message, details);
  }
}

/** The backend kind cannot do this at all (not a transient condition). */
export class UnsupportedByBackendError extends GatewayError {
  constructor(backend: string, operation: string, why?: string) {
    super(
      ErrorCode.UnsupportedByBackend,
      `backend "${backend}" does not support ${operation}${why ? `: ${why}` : ''}`,
      {
        backend,
      },
    );
  }
}

/** Connection refused, reset, DNS failure, or a 5xx that means the service is not there. */
export class BackendUnavailableError extends GatewayError {
  constructor(message: string, details: GatewayErrorDetails = {}) {
    super(ErrorCode.BackendUnavailable, message, { retryable: true, ...details });
  }
}

/**
 * The backend refused because a quota of the caller's project is used up (Cinder's 413
 * `overLimit`). Not an outage: retrying unchanged fails until usage drops or the quota grows.
 */
export class QuotaExceededError extends GatewayError {
  /** The backend's Retry-After in seconds, when it gave one (Cinder sends 0 for quotas). */
  readonly retryAfterSeconds?: number;

  constructor(message: string, details: GatewayErrorDetails & { retryAfterSeconds?: number } = {}) {
    super(ErrorCode.QuotaExceeded, message, { ...details, retryable: false });
    this.retryAfterSeconds = details.retryAfterSeconds;
  }

  override toExtensions(): Record<string, unknown> {
    const ext = super.toExtensions();
    return this.retryAfterSeconds === undefined ? ext : { ...ext, retryAfterSeconds: this.retryAfterSeconds };
  }
}

/** The backend did not answer within the call's deadline. */
export class BackendTimeoutError extends GatewayError {
  constructor(message: string, details: GatewayErrorDetails = {}) {
    super(ErrorCode.BackendTimeout, message, { retryable: true, ...details });
  }
}

/** The backend answered with an error the gateway has no more specific code for. */
export class BackendError extends GatewayError {
  constructor(message: string, details: GatewayErrorDetails = {}) {
    super(ErrorCode.BackendError, message, details);
  }
}

/**
 * One operation needed more calls to `backend` than its budget allows: the fields that need
 * them fail with this error; the rest of the answer stays.
 */
export class RequestLimitExceededError extends GatewayError {
  constructor(
    backend: string,
    readonly limit: number,
  ) {
    super(
      ErrorCode.RequestLimitExceeded,
      `this operation needs more than ${limit} calls to backend "${backend}"; ask for fewer items or split the operation`,
      { backend },
    );
  }

  /** Same shape as the other limit errors: `limit` names the setting, `max` is its value. */
  override toExtensions(): Record<string, unknown> {
    return { ...super.toExtensions(), limit: 'maxBackendCallsPerOperation', max: this.limit };
  }
}

/** The operation ran past its deadline; calls still running were cancelled. */
export class OperationTimeoutError extends GatewayError {
  constructor(readonly timeoutMs: number) {
    super(ErrorCode.OperationTimeout, `the operation did not finish within ${timeoutMs} ms`, { retryable: true });
  }

  override toExtensions(): Record<string, unknown> {
    return { ...super.toExtensions(), limit: 'operationTimeoutMs', max: this.timeoutMs };
  }
}

/** The same idempotency key came with a different input: the first request's result cannot answer it. */
export class IdempotencyKeyReusedError extends GatewayError {
  constructor(argument: string) {
    super(
      ErrorCode.IdempotencyKeyReused,
      `${argument} was already used with a different input; use a new key for a new request`,
    );
  }
}

/**
 * A retried create whose first request went through, but whose operation record is no longer held
 * (records live 1 h, idempotency keys 24 h; or the record was lost with Redis). Nothing is created
 * again; the created object's id is given so the caller can read it instead.
 */
export class OperationRecordGoneError extends NotFoundError {
  constructor(
    argument: string,
    readonly createdId: string,
  ) {
    super(
      `${argument} was already used and its request went through (${createdId}), but the operation record has expired or was lost; read that object instead`,
    );
  }

  override toExtensions(): Record<string, unknown> {
    return { ...super.toExtensions(), createdId: this.createdId };
  }
}

/** A subscription's queue passed its bound: the subscriber reads slower than events arrive. */
export class SlowConsumerError extends GatewayError {
  constructor(readonly bound: number) {
    super(
      ErrorCode.SlowConsumer,
      `the subscriber fell more than ${bound} results behind; reconnect and resume from the last cursor received`,
    );
  }
}

/** Which read budget of a subscription event was spent (`extensions.limit`). */
export type EventReadLimit = 'eventReadsPerCredential' | 'eventReadsPerEvent';

/**
 * A subscription event's field needs a backend read the event may not make: with no `limit`, the
 * execution makes no reads at all (served from the gateway's watcher); with one, the event's read
 * budget for the subscriber's credential, or for the whole event, is spent (docs/subscriptions.md).
 */
export class NotServedInEventsError extends GatewayError {
  constructor(
    readonly limit?: EventReadLimit,
    readonly max?: number,
  ) {
    super(
      ErrorCode.NotServedInEvents,
      limit === undefined
        ? "this field needs a backend read, which this event execution does not make (it is served from the gateway's watcher); query it over HTTP"
        : `this field needs a backend read past the event's budget of ${max} reads ${limit === 'eventReadsPerCredential' ? 'per credential (LIVE_EVENT_READS_PER_CREDENTIAL)' : 'for all subscribers (LIVE_EVENT_READS_PER_EVENT)'}; query it over HTTP`,
    );
  }

  override toExtensions(): Record<string, unknown> {
    return this.limit === undefined
      ? super.toExtensions()
      : { ...super.toExtensions(), limit: this.limit, max: this.max };
  }
}

/**
 * The cursor names a point the event log no longer holds: older than its retention, or from an
 * earlier epoch (the log restarted empty). Nothing can be replayed without gaps, so the client
 * re-lists and resumes from the list's cursor, as Kubernetes clients do after 410 Gone.
 */
export class CursorExpiredError extends GatewayError {
  constructor(argument: string, why: string) {
    super(ErrorCode.CursorExpired, `${argument}: ${why}; list again and resume from the list's cursor`);
  }
}

/** True when `err` is a gateway error whose backend answered `status`. */
export function isStatus(err: unknown, status: number): boolean {
  return err instanceof GatewayError && err.httpStatus === status;
}
