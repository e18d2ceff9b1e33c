/**
 * The execution context: who is calling, with which credentials, and the execution's loaders and
 * limits. It is transport-neutral: HTTP (`server/http-context.ts`), graphql-ws (`server/ws/`), the
 * live hub's event executions, federation's `_entities` and a compiled executor all build it from
 * the same facts.
 */
import { randomUUID } from 'node:crypto';
import type { CallerCredential, CallOptions } from '../adapters/contract/call-options';
import type { GatewayError } from '../adapters/contract/errors';
import type { OperationTracker } from '../subscriptions/operations';
import type { IdempotencyStore } from './idempotency';
import type { BackendRegistry } from './registry';
import { CredentialProof } from './credential-proof';
import type { ExecutionLimits, LimitedContext } from './execution-limits';
import type { LiveMutations } from './live-mutations';
import { createLoaders, LazyLoaders, type Loaders } from './loaders';
import type { ReadViews } from './watchers';
import type { ProblemSource } from './problems';

/** What every resolver receives. */
export interface GatewayContext extends LimitedContext {
  requestId: string;
  registry: BackendRegistry;
  loaders: Loaders;
  /**
   * Call options for one backend: the caller's credential for it, request id, the execution's
   * signal (client gone or deadline) and its backend-call budget.
   */
  call(backend: string): CallOptions;
  /** This execution's budget, deadline and response meter (execution-limits.ts). */
  limits: ExecutionLimits;
  /** The process-wide operation tracker (outlives this execution). */
  operations: OperationTracker;
  /** Remembers creating mutations' results by idempotency key. */
  idempotency: IdempotencyStore;
  /** The live path, told of accepted attaches/detaches (ATTACHING/DETACHING at once); absent: no live path. */
  live?: LiveMutations;
  /** Whether a backend accepted the caller's credential during this execution (metric labels). */
  credentialProof: CredentialProof;
  /** The volume doctor's open problems (problems.ts); absent: no doctor runs. */
  problems?: ProblemSource;
}

/** Most backend reads one loader batch runs at once unless the services say (the `maxConcurrentReads` setting's default). */
export const DEFAULT_MAX_CONCURRENT_READS = 16;

/** Process-wide parts, the same for every execution. */
export interface GatewayServices {
  registry: BackendRegistry;
  operations: OperationTracker;
  idempotency: IdempotencyStore;
  /** The live hub's `mutations`, once it runs. @default none */
  live?: LiveMutations;
  /** Most backend reads one loader batch runs at once. @default {@link DEFAULT_MAX_CONCURRENT_READS} (16) */
  maxConcurrentReads?: number;
  /**
   * The watcher directory (watchers.ts): its views serve full reads after the caller's own read
   * proved access (loaders.ts). @default none: every read goes to the backend
   */
  watchers?: ReadViews;
  /** The volume doctor, once it runs. @default none: no problems, every backend NOT_DIAGNOSED */
  problems?: ProblemSource;
}

/** What one execution needs to know about its caller. */
export interface ExecutionRequest {
  /** Credential per backend id; a backend not in the map is called anonymously. */
  credentials: ReadonlyMap<string, CallerCredential>;
  /** A caller-supplied request id if it is sane, else a new UUID. */
  requestId?: string | null;
  /** This execution's limits (made by the transport: the `limits` settings and its caller's abort signal). */
  limits: ExecutionLimits;
  /**
   * When set, every backend call fails before it is made, with the error this returns (subscription
   * events; made only when a field asks, so executions that call nothing build no error). @default calls allowed
   */
  refuseCalls?: () => GatewayError;
}

const SANE_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** One execution's context, with loaders of its own (never shared between executions or callers). */
export function createExecutionContext(services: GatewayServices, r: ExecutionRequest): GatewayContext {
  const requestId = r.requestId && SANE_REQUEST_ID.test(r.requestId) ? r.requestId : randomUUID();
  const limits = r.limits;
  const refuse = r.refuseCalls;
  const credentialProof = new CredentialProof();
  const call = (backend: string): CallOptions => {
    if (refuse) throw refuse();
    const credential = r.credentials.get(backend) ?? {};
    // Only the caller's own credential can prove anything: anonymous calls tell nothing.
    return {
      credential,
      requestId,
      signal: limits.signal,
      budget: limits.budget,
      ...(credential.token ? { onAnswer: credentialProof.answered } : {}),
    };
  };
  return {
    requestId,
    registry: services.registry,
    call,
    loaders: new LazyLoaders(() =>
      createLoaders(
        services.registry,
        call,
        services.maxConcurrentReads ?? DEFAULT_MAX_CONCURRENT_READS,
        services.watchers,
      ),
    ),
    operations: services.operations,
    idempotency: services.idempotency,
    live: services.live,
    problems: services.problems,
    limits,
    credentialProof,
  };
}
