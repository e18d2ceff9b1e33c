/**
 * Nomad wire error → typed gateway error, in one place. Nomad answers most failures with a
 * plain-text 500 (hashicorp/nomad command/agent/http.go `wrap`), so the text is the only signal;
 * this is the one module that reads it. The text reaches clients sanitized (`adapters/http/upstream-message.ts`): RPC errors can name
 * internal addresses.
 */
import {
  BackendError,
  BackendUnavailableError,
  ConflictError,
  ErrorCode,
  ForbiddenError,
  GatewayError,
  NotFoundError,
  QuotaExceededError,
  UnauthenticatedError,
  UnsupportedByBackendError,
} from '../contract/errors';
import { sanitizeUpstreamMessage } from '../http/upstream-message';

/** Ordered rules for 500 texts: first match wins. */
const TEXT_RULES: Array<[RegExp, ErrorCode]> = [
  // Claim and in-use conflicts (nomad/structs/errors.go, CSIVolume.Merge, state store deregister).
  [
    /volume in use|volume is in use|existing capability in use|claimed volume|max claims reached|currently unschedulable/i,
    ErrorCode.Conflict,
  ],
  // A CSI plugin out of capacity or quota answers gRPC ResourceExhausted, which Nomad passes on in its text.
  [/code = ResourceExhausted|quota exceeded|VolumeLimitExceeded/i, ErrorCode.QuotaExceeded],
  // Nomad's own text reads "no CSI plugin named: <id> could be found" (sic).
  [/not found|no such (volume|plugin)|could not be found|no CSI plugin named/i, ErrorCode.NotFound],
  [/permission denied/i, ErrorCode.Forbidden],
  [/does not support|unimplemented for this plugin|plugin has no controller/i, ErrorCode.UnsupportedByBackend],
  [
    /^validation:|cannot be updated|not compatible|missing volume|nonexistent namespace|only one of|request body/i,
    ErrorCode.BadUserInput,
  ],
  [/no healthy controllers|no cluster leader|rpc error|timeout/i, ErrorCode.BackendUnavailable],
];

/** What the adapter was doing, for the message. */
export interface ErrorContext {
  backend: string;
  /** e.g. `reading volume "web-data"`. */
  action: string;
  /** Whether the caller sent a token at all (403 without one means "authenticate"). */
  hadToken: boolean;
}

export function errorFromResponse(status: number, text: string, ctx: ErrorContext): GatewayError {
  const backendMessage = sanitizeUpstreamMessage(text) || undefined;
  const d = { backend: ctx.backend, httpStatus: status, backendMessage };
  const msg = (what: string): string =>
    `${what} while ${ctx.action} on backend "${ctx.backend}"${backendMessage ? `: ${backendMessage}` : ''}`;

  if (status === 403) {
    if (/ACL token not found/i.test(text)) return new UnauthenticatedError(msg('the Nomad token is not known'), d);
    if (!ctx.hadToken)
      return new UnauthenticatedError(msg('no Nomad token was sent (X-Nomad-Token) and anonymous access is denied'), d);
    // CSI endpoints answer an unknown token with the same `Permission denied` as a lacking policy.
    return new ForbiddenError(msg('the Nomad token is unknown or not allowed'), d);
  }
  if (status === 404) return new NotFoundError(msg('not found'), d);
  if (status === 400) return new GatewayError(ErrorCode.BadUserInput, msg('Nomad rejected the request'), d);
  if (status === 429 || status === 502 || status === 503 || status === 504) {
    return new BackendUnavailableError(msg('Nomad is unavailable'), { ...d, retryable: true });
  }
  for (const [pattern, code] of TEXT_RULES) {
    if (!pattern.test(backendMessage ?? '')) continue;
    switch (code) {
      case ErrorCode.Conflict:
        return new ConflictError(msg('conflict'), d);
      case ErrorCode.QuotaExceeded:
        return new QuotaExceededError(msg('over quota'), d);
      case ErrorCode.NotFound:
        return new NotFoundError(msg('not found'), d);
      case ErrorCode.Forbidden:
        return new ForbiddenError(msg('not allowed'), d);
      case ErrorCode.UnsupportedByBackend:
        return new UnsupportedByBackendError(ctx.backend, ctx.action, backendMessage);
      case ErrorCode.BadUserInput:
        return new GatewayError(ErrorCode.BadUserInput, msg('Nomad rejected the input'), d);
      default:
        return new BackendUnavailableError(msg('Nomad could not serve the request'), { ...d, retryable: true });
    }
  }
  return new BackendError(msg(`Nomad answered ${status}`), d);
}
