/** Per-request context: who is calling, with which credentials, and the request's loaders. */
import { randomUUID } from 'node:crypto';
import type { CallerCredential, CallOptions } from '../adapters/backend';
import type { GatewayError } from '../adapters/errors';
import type { OperationTracker } from '../subscriptions/operations';
import { credentialsFromHeaders, type Headers } from './credentials';
import { DEFAULT_LIMITS, ExecutionLimits, type LimitedContext } from './limits';
import { createLoaders, type Loaders } from './loaders';
import type { BackendRegistry } from './registry';

/** A failure that nulls only part of an answer (one backend of a merged list). */
export interface PartialError {
  error: GatewayError;
  path: ReadonlyArray<string | number>;
}

export interface GatewayContext extends LimitedContext {
  requestId: string;
  registry: BackendRegistry;
  loaders: Loaders;
  /**
   * Call options for one backend: the caller's credential for it, request id, the operation's
   * signal (client gone or deadline) and its backend-call budget.
   */
  call(backend: string): CallOptions;
  /** This execution's budget, deadline and response meter (server/limits). */
  limits: ExecutionLimits;
  /** Errors to add to the response without nulling the data around them. */
  partialErrors: PartialError[];
  /** The process-wide operation tracker (outlives this request). */
  operations: OperationTracker;
}

export interface ContextOptions {
  registry: BackendRegistry;
  headers: Headers;
  /** Caller-supplied `X-Request-Id` if it is sane, else a new UUID. */
  requestId?: string;
  /** Aborted when the client goes away (used when `limits` is not given). */
  signal?: AbortSignal;
  /** @default 16 */
  maxConcurrentReads?: number;
  operations: OperationTracker;
  /** This execution's limits. @default new ExecutionLimits with the default limits and `signal` */
  limits?: ExecutionLimits;
}

export function createContext(o: ContextOptions): GatewayContext {
  const requestId = o.requestId && /^[A-Za-z0-9._:-]{1,128}$/.test(o.requestId) ? o.requestId : randomUUID();
  const credentials = credentialsFromHeaders(o.headers, o.registry);
  const limits = o.limits ?? new ExecutionLimits(DEFAULT_LIMITS, o.signal);
  const call = (backend: string): CallOptions => ({
    credential: credentials.get(backend) ?? ({} as CallerCredential),
    requestId,
    signal: limits.signal,
    budget: limits.budget,
  });
  return {
    requestId,
    registry: o.registry,
    call,
    loaders: createLoaders(o.registry, call, o.maxConcurrentReads ?? 16),
    partialErrors: [],
    operations: o.operations,
    limits,
  };
}
