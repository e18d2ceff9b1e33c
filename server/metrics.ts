/**
 * Prometheus metrics through prom-client, on one registry per gateway instance (so tests and
 * several gateways in one process do not share counters). Later parts (subscriptions, watchers,
 * event log, breakers) register their metrics on `metrics.registry` the same way.
 */
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { CallRecord } from '../adapters/transport';

const LATENCY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

export class GatewayMetrics {
  readonly registry = new Registry();

  /** GraphQL operations by name, type and outcome (`success`, `error`, `partial`). */
  readonly operations = new Counter({
    name: 'gateway_graphql_operations_total',
    help: 'GraphQL operations handled, by operation name, type and outcome.',
    labelNames: ['operation', 'type', 'outcome'] as const,
    registers: [this.registry],
  });

  readonly operationSeconds = new Histogram({
    name: 'gateway_graphql_operation_duration_seconds',
    help: 'Time from request start to response, by operation name and type.',
    labelNames: ['operation', 'type'] as const,
    buckets: LATENCY_BUCKETS,
    registers: [this.registry],
  });

  /** Backend calls by backend, endpoint template and HTTP status (`0` when no answer came). */
  readonly backendCalls = new Counter({
    name: 'gateway_backend_calls_total',
    help: 'HTTP calls to backends, by backend, endpoint template and status (0 = no answer).',
    labelNames: ['backend', 'endpoint', 'status'] as const,
    registers: [this.registry],
  });

  /** Requests the HTTP edge refused before GraphQL execution, by code and status (429, 413, 431 …). */
  readonly httpRefusals = new Counter({
    name: 'gateway_http_refusals_total',
    help: 'Requests refused at the HTTP edge before execution, by error code and HTTP status.',
    labelNames: ['code', 'status'] as const,
    registers: [this.registry],
  });

  readonly backendSeconds = new Histogram({
    name: 'gateway_backend_call_duration_seconds',
    help: 'Duration of backend calls including retries, by backend and endpoint template.',
    labelNames: ['backend', 'endpoint'] as const,
    buckets: LATENCY_BUCKETS,
    registers: [this.registry],
  });

  /** Tracked operations reaching each state, by kind. */
  readonly trackedOperations = new Counter({
    name: 'gateway_tracked_operations_total',
    help: 'Tracked asynchronous operations entering a state, by kind and state.',
    labelNames: ['kind', 'state'] as const,
    registers: [this.registry],
  });

  /** Operations this process is polling now, by kind. */
  readonly trackedOperationsActive = new Gauge({
    name: 'gateway_tracked_operations_active',
    help: 'Tracked operations not yet in a terminal state, by kind.',
    labelNames: ['kind'] as const,
    registers: [this.registry],
  });

  constructor(options: { /** Process metrics (CPU, memory, event loop). @default true */ processMetrics?: boolean } = {}) {
    if (options.processMetrics ?? true) collectDefaultMetrics({ register: this.registry, prefix: 'gateway_' });
  }

  /** Transport hook: one record per finished backend call. */
  readonly recordCall = (r: CallRecord): void => {
    this.backendCalls.inc({ backend: r.backend, endpoint: r.endpoint, status: String(r.status) });
    this.backendSeconds.observe({ backend: r.backend, endpoint: r.endpoint }, r.durationMs / 1000);
  };

  recordOperation(operation: string, type: string, outcome: 'success' | 'error' | 'partial', seconds: number): void {
    this.operations.inc({ operation, type, outcome });
    this.operationSeconds.observe({ operation, type }, seconds);
  }
}
