/**
 * What every backend call takes besides its arguments: the caller's credential and the call's
 * request id, signal and budget (`backend.ts`, `capabilities.ts`, `completion.ts` and `watch.ts` use them).
 */
import type { CallBudget } from './budget';

/**
 * The caller's credential for one backend, taken from the request and passed through.
 * Never logged, never returned, never shared between callers.
 */
export interface CallerCredential {
  /** Backend token (Nomad ACL secret, Keystone token); undefined = anonymous. */
  token?: string;
}

/**
 * What marks a call as the gateway's background probe (server/readiness.ts), never a caller's:
 * it alone may pass a circuit breaker that is not closed (`breaker.ts`), and it has a deadline of
 * its own, shorter than callers' (a probe to a hung host need not wait the call deadline).
 */
export interface ProbeCall {
  /** Deadline of each request the probe sends, ms (at most the backend's call deadline). */
  timeoutMs: number;
}

/** Per-call options every backend method takes. */
export interface CallOptions {
  credential: CallerCredential;
  /** Caller's request id, forwarded to the backend for log correlation. */
  requestId?: string;
  /**
   * Aborted when the operation is abandoned or runs past its deadline; a {@link GatewayError}
   * as the abort reason is what the call fails with.
   */
  signal?: AbortSignal;
  /** The execution's backend-call budget; every HTTP request takes one unit. @default unlimited */
  budget?: CallBudget;
  /**
   * Told the HTTP status of each answer to a request that carried `credential` (never the
   * gateway's own service credential): whether a backend accepted the caller. @default none
   */
  onAnswer?: (status: number) => void;
  /** Set by the background probe only. @default a caller's call */
  probe?: ProbeCall;
}
