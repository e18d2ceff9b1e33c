/**
 * Checks of outgoing header fields, before anything reaches undici. undici 7 rejects a bad
 * header value (or name, method, path) synchronously and, inside a Pool, never gives the
 * connection slot back: a handful of such requests used to wedge a backend's pool for every
 * caller. So nothing undici would refuse may reach it: values that come from callers (tokens,
 * CSI secrets, request ids) are refused as BAD_USER_INPUT, anything else the gateway built
 * itself as an internal error.
 */
import { ErrorCode, GatewayError } from '../contract/errors';
import { checkHeaderValue } from '../contract/header-value';

/** RFC 9110 `token`, the syntax of a field name. */
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

/** Fields the transport (undici) owns: framing and connection management. */
const RESERVED = new Set([
  'host',
  'content-length',
  'transfer-encoding',
  'keep-alive',
  'upgrade',
  'connection',
  'expect',
]);

/** undici's own request-target rule (`invalidPathRegex`): visible ASCII and Latin-1, no space. */
const PATH = /^[\x21-\xff]*$/;

/**
 * The transport's backstop: every header and the request target, before a request is handed to
 * undici. Bad values are the caller's input (BAD_USER_INPUT); a bad name or path is a gateway
 * bug, reported as INTERNAL_SERVER_ERROR without details.
 */
export function checkOutgoing(
  backend: string,
  path: string,
  headers: Readonly<Record<string, string>> | undefined,
): void {
  if (!PATH.test(path)) throw refused(backend, 'request path');
  for (const [name, value] of Object.entries(headers ?? {})) {
    if (!TOKEN.test(name) || RESERVED.has(name.toLowerCase()))
      throw refused(backend, `header name ${JSON.stringify(name)}`);
    if (typeof value !== 'string') throw refused(backend, `value of header ${name}`);
    checkHeaderValue(`header ${name}`, value);
  }
}

function refused(backend: string, what: string): GatewayError {
  return new GatewayError(
    ErrorCode.Internal,
    `refused to send a request to backend "${backend}" with an invalid ${what}`,
    { backend },
  );
}
