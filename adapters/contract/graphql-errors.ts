/**
 * The one rule that turns any error into GraphQL's error format, shared by every path that answers
 * a client: HTTP (Apollo's `formatError`), graphql-ws and the live hub's own executions.
 *
 * - A gateway error (thrown, or found behind `originalError`) keeps its message and sends
 *   `toExtensions()`: its code and machine-readable details. Backend text in it was bounded and
 *   stripped where it was read (`adapters/http/upstream-message.ts`).
 * - A GraphQL error that carries its own code (graphql-js's and Apollo's parse, validation and
 *   variable errors) keeps its message and code, nothing else.
 * - graphql-js's own word about the request (no thrown error behind it, no field path) is
 *   `BAD_USER_INPUT`.
 * - Anything else is the gateway's fault: `INTERNAL_SERVER_ERROR` with a fixed message, and the
 *   error behind it is handed to the caller's `onUnexpected` to log. Its text never reaches the
 *   client: it may hold paths, hosts or secrets.
 *
 * It lives in the contract because every layer above may import it, and it knows no transport.
 */
import { GraphQLError, type GraphQLFormattedError } from 'graphql';
import { ErrorCode, GatewayError } from './errors';

/** Where in the document and the result an error belongs. */
type Where = Pick<GraphQLFormattedError, 'locations' | 'path'>;

/** The answer to an error the gateway did not expect: the same bytes on every path. */
export const INTERNAL_ERROR_MESSAGE = 'Internal server error';

/** An unexpected error as clients see it, at `where` when known. */
export function internalError(where: Where = {}): GraphQLFormattedError {
  return { message: INTERNAL_ERROR_MESSAGE, ...where, extensions: { code: ErrorCode.Internal } };
}

/**
 * An unexpected error already logged where it happened, to be answered later: formatted as
 * {@link internalError} (and not reported again); the original stays in `cause`, for nobody.
 */
export class InternalError extends GatewayError {
  constructor(cause: unknown) {
    super(ErrorCode.Internal, INTERNAL_ERROR_MESSAGE, { cause });
  }

  override toExtensions(): Record<string, unknown> {
    return { code: this.code };
  }
}

/** Options of {@link formatGraphQLError}. */
export interface FormatErrorOptions {
  /**
   * The typed reason behind a parse error (`GRAPHQL_PARSE_FAILED`), which graphql-js reports as a
   * plain syntax error: the token limit. Given the parse error's `originalError`. @default none
   */
  parseErrorReason?: (err: unknown) => GatewayError | undefined;
  /** Told of each unexpected error (the innermost error behind it) and its path, to log. @default nothing */
  onUnexpected?: (cause: unknown, path: GraphQLFormattedError['path']) => void;
}

/**
 * The gateway error behind `error`: itself, or one a resolver wrapper, validation rule or guard put
 * behind `originalError` (Apollo and graphql-js stamp their own codes on those; ours win).
 */
export function gatewayErrorOf(error: unknown): GatewayError | undefined {
  let e: unknown = error;
  for (let i = 0; i < 4 && e instanceof Error; i++) {
    if (e instanceof GatewayError) return e;
    e = (e as { originalError?: unknown }).originalError;
  }
  return undefined;
}

/** The innermost error behind `error`, for the log. */
function causeOf(error: unknown): unknown {
  let e: unknown = error;
  for (let i = 0; i < 4 && e instanceof GraphQLError && e.originalError; i++) e = e.originalError;
  return e;
}

/** graphql-js's and Apollo's code for a document that does not parse. */
const PARSE_FAILED = 'GRAPHQL_PARSE_FAILED';

/** What the client is told about `error`, before formatting. */
type Verdict = { typed: GatewayError } | { code: string } | { request: true } | { unexpected: unknown };

function judge(error: unknown, parseErrorReason?: FormatErrorOptions['parseErrorReason']): Verdict {
  const typed = gatewayErrorOf(error);
  if (typed) return { typed };
  if (!(error instanceof GraphQLError)) return { unexpected: error };
  const code = error.extensions?.code;
  const reason = code === PARSE_FAILED ? parseErrorReason?.(error.originalError) : undefined;
  if (reason) return { typed: reason };
  if (typeof code === 'string' && code !== (ErrorCode.Internal as string)) return { code };
  if (error.originalError == null && error.path === undefined) return { request: true };
  return { unexpected: causeOf(error) };
}

/** Where `error` belongs, with the keys it has only. */
function whereOf(error: unknown): Where {
  if (!(error instanceof GraphQLError)) return {};
  return { ...(error.locations ? { locations: error.locations } : {}), ...(error.path ? { path: error.path } : {}) };
}

/** One error in GraphQL's wire format (see the module's comment for the rule). */
export function formatGraphQLError(error: unknown, o: FormatErrorOptions = {}): GraphQLFormattedError {
  const v = judge(error, o.parseErrorReason);
  const where = whereOf(error);
  if ('typed' in v) return { message: v.typed.message, ...where, extensions: v.typed.toExtensions() };
  const message = (error as GraphQLError).message;
  if ('code' in v) return { message, ...where, extensions: { code: v.code } };
  if ('request' in v) return { message, ...where, extensions: { code: ErrorCode.BadUserInput } };
  o.onUnexpected?.(v.unexpected, where.path);
  return internalError(where);
}

/** The `extensions.code` of a GraphQL error (as thrown or formatted), for counting and tracing: `UNKNOWN` when it has none. */
export function errorCodeOf(error: { readonly extensions?: { readonly [key: string]: unknown } }): string {
  const code = error.extensions?.code;
  return typeof code === 'string' ? code : 'UNKNOWN';
}

/**
 * The error behind `error` when {@link formatGraphQLError} would answer it as unexpected, else
 * undefined: for a transport that logs where the request's id is known (Apollo's
 * `didEncounterErrors`) and formats elsewhere.
 */
export function unexpectedCause(
  error: unknown,
  parseErrorReason?: FormatErrorOptions['parseErrorReason'],
): { cause: unknown } | undefined {
  const v = judge(error, parseErrorReason);
  return 'unexpected' in v ? { cause: v.unexpected } : undefined;
}

/**
 * Any error as a GraphQL error, for results a transport or the hub makes itself: a gateway error
 * carries its extensions, anything else only sits behind `originalError` for the formatter to mask.
 */
export function toGraphQLError(err: unknown): GraphQLError {
  if (err instanceof GraphQLError) return err;
  if (err instanceof GatewayError)
    return new GraphQLError(err.message, { originalError: err, extensions: err.toExtensions() });
  const e = err instanceof Error ? err : new Error(String(err));
  return new GraphQLError(e.message, { originalError: e });
}
