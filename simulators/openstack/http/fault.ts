/**
 * The fault body Cinder and Nova share (`cinder/api/openstack/wsgi.py` and Nova's twin Fault):
 * `{"<name>": {"code": N, "message": "…"}}`, the name chosen by status, `computeFault` otherwise.
 */
import { pyDumps } from '../pyjson';

const FAULT_NAMES: Record<number, string> = {
  400: 'badRequest',
  401: 'unauthorized',
  403: 'forbidden',
  404: 'itemNotFound',
  405: 'badMethod',
  409: 'conflictingRequest',
  413: 'overLimit',
  415: 'badMediaType',
  429: 'overLimit',
  501: 'notImplemented',
  503: 'serviceUnavailable',
};

export function faultName(status: number): string {
  return FAULT_NAMES[status] ?? 'computeFault';
}

/** The fault body; a 413 with a Retry-After header also carries it as `retryAfter` (wsgi.py Fault). */
export function faultBody(status: number, message: string, retryAfter?: string): string {
  const inner: Record<string, unknown> = { code: status, message };
  if (status === 413 && retryAfter) inner.retryAfter = retryAfter;
  return pyDumps({ [faultName(status)]: inner });
}

/** An error a Cinder or Nova handler raises; the router turns it into a fault response. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    /** `Retry-After` header value (Cinder's QuotaError sends `0`). */
    readonly retryAfter?: string,
  ) {
    super(message);
  }
}

export const GENERIC_NOT_FOUND = 'The resource could not be found.';
export const GENERIC_500 = 'The server has either erred or is incapable of performing the requested operation.';
