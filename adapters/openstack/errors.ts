/**
 * OpenStack wire error → typed gateway error, in one place. Cinder and Nova answer faults as
 * `{"<faultName>": {"code", "message"}}` (the `Fault` of openstack/cinder
 * cinder/api/openstack/wsgi.py and of openstack/nova nova/api/openstack/wsgi.py); keystonemiddleware
 * answers `{"error": {"code", "title", "message"}}` with 401. The HTTP status decides the code,
 * except that Cinder and Nova answer most state conflicts with 400 `Invalid volume: …` (every
 * `Invalid*` exception of openstack/cinder cinder/exception.py is a 400;
 * test/fixtures/recorded/cinder-21/08-errors.md): those become CONFLICT. The backend's message,
 * sanitized (`../upstream-message.ts`), is kept in `backendMessage`.
 */
import {
  BackendError,
  BackendUnavailableError,
  BadUserInputError,
  ConflictError,
  ErrorCode,
  ForbiddenError,
  GatewayError,
  type InputField,
  NotFoundError,
  QuotaExceededError,
  UnauthenticatedError,
} from '../contract/errors';
import { sanitizeUpstreamMessage } from '../http/upstream-message';

/**
 * 400 texts that report the volume's (or snapshot's) state, not the request's shape: attaching
 * an attached volume, reserving, deleting, extending or snapshotting in the wrong status, detaching
 * one that is not attached (cinder-21/08-errors.md, Nova's attach and swap checks).
 */
const STATE_CONFLICT =
  /already attached|\bstatus must be\b|must not be migrating, attached|must be detached|attached to a different instance|in maintenance mode/i;

/** Which OpenStack service answered. */
export type OpenStackService = 'identity' | 'volume' | 'compute';

const SERVICE_NAME: Record<OpenStackService, string> = { identity: 'Keystone', volume: 'Cinder', compute: 'Nova' };

export interface ErrorContext {
  backend: string;
  service: OpenStackService;
  /** e.g. `extending volume 4f1…`. */
  action: string;
}

/** The fault's inner object (`{"code", "message", "retryAfter"?}`), when the body is a fault. */
function fault(text: string): { message?: unknown; retryAfter?: unknown } | undefined {
  try {
    const body = JSON.parse(text) as Record<string, unknown>;
    const inner = body && typeof body === 'object' ? Object.values(body)[0] : undefined;
    return inner && typeof inner === 'object' ? inner : undefined;
  } catch {
    return undefined; // not JSON: HTML from a proxy, or plain text
  }
}

/** The `message` of a fault body, or the raw text when the body is not a fault (unsanitized). */
export function faultMessage(text: string): string {
  const m = fault(text)?.message;
  return typeof m === 'string' ? m : text.trim();
}

/** `retryAfter` of an overLimit fault (Cinder copies its Retry-After header there) in seconds. */
function retryAfterSeconds(text: string): number | undefined {
  const r = fault(text)?.retryAfter;
  const n = typeof r === 'number' ? r : typeof r === 'string' && /^\d{1,6}$/.test(r) ? Number(r) : NaN;
  return Number.isSafeInteger(n) ? n : undefined;
}

export function errorFromResponse(status: number, text: string, ctx: ErrorContext): GatewayError {
  const backendMessage = sanitizeUpstreamMessage(faultMessage(text)) || undefined;
  const d = { backend: ctx.backend, httpStatus: status, backendMessage };
  const service = SERVICE_NAME[ctx.service];
  const msg = (what: string): string =>
    `${what} while ${ctx.action} on backend "${ctx.backend}" (${service})${backendMessage ? `: ${backendMessage}` : ''}`;
  switch (status) {
    case 400:
      if (STATE_CONFLICT.test(backendMessage ?? ''))
        return new ConflictError(msg(`${service} refused it in the volume's current state`), d);
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
      // Cinder answers every QuotaError with 413 overLimit (VolumeSizeExceedsAvailableQuota,
      // VolumeLimitExceeded, SnapshotLimitExceeded …): the project's quota, not an outage.
      return new QuotaExceededError(msg('over quota'), { ...d, retryAfterSeconds: retryAfterSeconds(text) });
    case 429:
      return new BackendUnavailableError(msg('rate limited'), { ...d, retryable: true });
    case 502:
    case 503:
    case 504:
      return new BackendUnavailableError(msg(`${service} is unavailable`), d);
    default:
      return new BackendError(msg(`${service} answered ${status}`), d);
  }
}

/**
 * A Nova server's attachment named where a host attachment (Cinder's attachments API) is expected.
 * Nova made it and owns it: Cinder refuses users who delete it (409 ConflictNovaUsingAttachment,
 * bug #2004555; recorded in nova-26/01), and re-connecting or completing it behind Nova's back
 * would leave the server's record wrong. Refused before any write, naming the mutation to use.
 */
export class NovaAttachmentError extends BadUserInputError {
  /**
   * @param field the input field that named it, relative to the adapter's input: e.g. `target.host.hostAttachmentId`.
   * @param serverId the Nova server that holds the attachment.
   * @param useMutation the mutation that does this through Nova (`detachVolume` with `target.server`).
   */
  constructor(
    field: InputField,
    readonly serverId: string,
    readonly useMutation: string,
  ) {
    super('', field.path);
    this.relativeTo(
      field.path,
      (name) =>
        `${name(field.path)} names the attachment of a Nova server (${serverId}), not a host attachment: Nova made it and manages it; use ${useMutation} with server ${serverId} instead`,
    );
  }

  override toExtensions(): Record<string, unknown> {
    return { ...super.toExtensions(), serverId: this.serverId, useMutation: this.useMutation };
  }
}

/** The cloud is too old for something; said before any call. */
export function tooOld(
  backend: string,
  what: string,
  service: 'volume' | 'compute',
  need: string,
  have: string,
): GatewayError {
  const name = service === 'volume' ? 'Cinder' : 'Nova';
  return new GatewayError(
    ErrorCode.UnsupportedByBackend,
    `backend "${backend}" cannot do ${what}: it needs ${name} microversion ${need}, the cloud offers up to ${have}`,
    { backend },
  );
}
