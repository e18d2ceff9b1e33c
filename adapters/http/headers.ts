/**
 * Checks of outgoing header fields, before anything reaches undici. undici 7 rejects a bad
 * header value (or name, method, path) synchronously and, inside a Pool, never gives the
 * connection slot back: a handful of such requests used to wedge a backend's pool for every
 * caller. So nothing undici would refuse may reach it: values that come from callers (tokens,
 * CSI secrets, request ids) are refused as BAD_USER_INPUT, anything else the gateway built
 * itself as an internal error.
 */
import { BadUserInputError, ErrorCode, GatewayError } from '../contract/errors';

/**
 * Printable Latin-1: SP to `~` and NBSP to `ÿ`. Not HTAB: no token, secret or id has one, and
 * HTTP servers trim it at the ends of a value (Go's textproto does), so it would arrive altered.
 * Not the C0/C1 controls and DEL. Nothing above U+00FF: a header is bytes, and undici refuses it.
 */
const PRINTABLE_LATIN1 = /^[\x20-\x7e\xa0-\xff]*$/;

/** RFC 9110 `token`, the syntax of a field name. */
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

/** Fields the transport (undici) owns: framing and connection management. */
const RESERVED = new Set(['host', 'content-length', 'transfer-encoding', 'keep-alive', 'upgrade', 'connection', 'expect']);

/** undici's own request-target rule (`invalidPathRegex`): visible ASCII and Latin-1, no space. */
const PATH = /^[\x21-\xff]*$/;

/** True when `value` may be sent as a header value unchanged. */
export function isPrintableLatin1(value: string): boolean {
  return PRINTABLE_LATIN1.test(value);
}

/**
 * Why `value` cannot be sent as a header value, starting with `what` and naming the position of
 * the first bad character, never the value (it may be a secret); null when it can be sent.
 * @param what how the caller knows the field, e.g. `header X-Nomad-Token` or `secrets`
 */
export function headerValueProblem(what: string, value: string): string | null {
  if (isPrintableLatin1(value)) return null;
  const at = [...value].findIndex((c) => !PRINTABLE_LATIN1.test(c));
  return `${what}: character ${at + 1} is not allowed in an HTTP header (printable Latin-1 only: no control characters, tabs, line breaks or characters above U+00FF)`;
}

/**
 * Refuses a header value that is not printable Latin-1 ({@link headerValueProblem}).
 * @throws BadUserInputError
 */
export function checkHeaderValue(what: string, value: string, argument?: string): void {
  const problem = headerValueProblem(what, value);
  if (problem !== null) throw new BadUserInputError(problem, argument);
}

/**
 * The transport's backstop: every header and the request target, before a request is handed to
 * undici. Bad values are the caller's input (BAD_USER_INPUT); a bad name or path is a gateway
 * bug, reported as INTERNAL_SERVER_ERROR without details.
 */
export function checkOutgoing(backend: string, path: string, headers: Readonly<Record<string, string>> | undefined): void {
  if (!PATH.test(path)) throw refused(backend, 'request path');
  for (const [name, value] of Object.entries(headers ?? {})) {
    if (!TOKEN.test(name) || RESERVED.has(name.toLowerCase())) throw refused(backend, `header name ${JSON.stringify(name)}`);
    if (typeof value !== 'string') throw refused(backend, `value of header ${name}`);
    checkHeaderValue(`header ${name}`, value);
  }
}

function refused(backend: string, what: string): GatewayError {
  return new GatewayError(ErrorCode.Internal, `refused to send a request to backend "${backend}" with an invalid ${what}`, { backend });
}
