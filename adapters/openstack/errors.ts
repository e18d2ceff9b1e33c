/**
 * OpenStack wire error → typed gateway error, in one place. Cinder and Nova answer faults as
 * `{"<faultName>": {"code", "message"}}` (backends.md 2.1, 3.1); keystonemiddleware answers
 * `{"error": {"code", "title", "message"}}` with 401. The HTTP status decides the code; the
 * backend's own message is kept in `backendMessage`.
 */
import {
  BackendError,
  BackendUnavailableError,
  BadUserInputError,
  ConflictError,
  ErrorCode,
  ForbiddenError,
  GatewayError,
  NotFoundError,
  UnauthenticatedError,
} from '../errors';

const MAX_BACKEND_MESSAGE = 1000;

/** Which OpenStack service answered. */
export type OpenStackService = 'identity' | 'volume' | 'compute';

const SERVICE_NAME: Record<OpenStackService, string> = { identity: 'Keystone', volume: 'Cinder', compute: 'Nova' };

export interface ErrorContext {
  backend: string;
  service: OpenStackService;
  /** e.g. `extending volume 4f1…`. */
  action: string;
}

/** The `message` of a fault body, or the raw text when the body is not a fault. */
export function faultMessage(text: string): string {
  try {
    const body = JSON.parse(text) as Record<string, unknown>;
    const inner = Object.values(body)[0] as { message?: unknown } | undefined;
    if (inner && typeof inner.message === 'string') return inner.message;
  } catch {
    /* not JSON: HTML from a proxy, or plain text */
  }
  return text.trim();
}

export function errorFromResponse(status: number, text: string, ctx: ErrorContext): GatewayError {
  const backendMessage = faultMessage(text).slice(0, MAX_BACKEND_MESSAGE);
  const d = { backend: ctx.backend, httpStatus: status, backendMessage };
  const service = SERVICE_NAME[ctx.service];
  const msg = (what: string): string => `${what} while ${ctx.action} on backend "${ctx.backend}" (${service}): ${backendMessage}`;
  switch (status) {
    case 400:
      return new GatewayError(ErrorCode.BadUserInput, msg(`${service} rejected the request`), d);
    case 401:
      return new UnauthenticatedError(msg('the OpenStack token is missing, invalid or expired (send X-Auth-Token)'), d);
    case 403:
      return new ForbiddenError(msg('not allowed'), d);
    case 404:
      return new NotFoundError(msg('not found'), d);
    case 409:
      return new ConflictError(msg('conflict'), d);
    case 413:
    case 429:
      return new BackendUnavailableError(msg('over limit'), { ...d, retryable: status === 429 });
    case 502:
    case 503:
    case 504:
      return new BackendUnavailableError(msg(`${service} is unavailable`), d);
    default:
      return new BackendError(msg(`${service} answered ${status}`), d);
  }
}

/** The cloud is too old for something; said before any call. */
export function tooOld(backend: string, what: string, service: 'volume' | 'compute', need: string, have: string): GatewayError {
  const name = service === 'volume' ? 'Cinder' : 'Nova';
  return new GatewayError(ErrorCode.UnsupportedByBackend, `backend "${backend}" cannot do ${what}: it needs ${name} microversion ${need}, the cloud offers up to ${have}`, { backend });
}

export { BadUserInputError };
