/**
 * Prometheus metrics through prom-client, on one registry per gateway instance (so tests and
 * several gateways in one process do not share counters). Later parts (subscriptions, watchers,
 * event log, breakers) register their metrics on `metrics.registry` the same way.
 */
import { DoctorMetrics } from './doctor-metrics';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { LiveHubMetrics } from './live-metrics';
import { ReplicationMetrics } from './replication-metrics';
import type { BreakerBoard, BreakerState } from '../adapters/contract/breaker';
import type { CallRecord } from '../adapters/contract/module';
import type { CompiledDocumentsStats } from './execution/compiled-documents';

/** The gauge value of each breaker state. */
const BREAKER_GAUGE: Record<BreakerState, number> = { CLOSED: 0, HALF_OPEN: 1, OPEN: 2 };

/** Bytes queued for sending over one transport: the largest one queue holds, and the sum over all. */
export interface QueueBytes {
  max: number;
  sum: number;
}

/** What the socket layer tells the gauges at scrape time. */
export interface WebSocketMetricsSource {
  connections(): number;
  /** Open subscriptions per root field (the hub's `counts()`). */
  subscriptions(): Record<string, number>;
  queueBytes(): QueueBytes;
}

/** The HTTP stream transports (server/streams/): the label values of `gateway_stream_subscriptions`. */
export type StreamTransportName = 'sse' | 'multipart';

/** Every subscription transport: the `transport` label of `gateway_ws_queue_bytes` and `gateway_slow_consumer_cuts_total`. */
export type QueueTransportName = 'ws' | StreamTransportName;

/**
 * Why a slow consumer was cut: its own queue passed `WS_MAX_BUFFERED_BYTES` (`queue`), its
 * address's queues passed `WS_MAX_BUFFERED_BYTES_PER_ADDRESS` (`address`), or the hub
 * dropped it past `LIVE_MAX_QUEUED` results (`hub`).
 */
export type SlowConsumerCutReason = 'queue' | 'address' | 'hub';

const QUEUE_TRANSPORTS: readonly QueueTransportName[] = ['ws', 'sse', 'multipart'];
const CUT_REASONS: readonly SlowConsumerCutReason[] = ['queue', 'address', 'hub'];

/** What the HTTP stream transports tell the gauges at scrape time. */
export interface StreamMetricsSource {
  /** Subscriptions streaming now, per transport. */
  subscriptions(): Record<StreamTransportName, number>;
  /** Bytes queued on their responses, per transport. */
  queueBytes(): Record<StreamTransportName, QueueBytes>;
}

/**
 * How a GraphQL operation ended: `partial` when data came back beside errors; `aborted` when the
 * client went away first (its connection closed), whatever the backends did.
 */
export type OperationOutcome = 'success' | 'error' | 'partial' | 'aborted';

const LATENCY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

export class GatewayMetrics {
  readonly registry = new Registry();

  /**
   * GraphQL operations by name, type and outcome ({@link OperationOutcome}). The name is a label
   * only for trusted documents and callers a backend accepted (server/operation-labels.ts).
   */
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

  /** With `EXECUTION_ENGINE=compiled`: query and mutation executions over HTTP by engine, and why graphql-js ran (`none` when compiled). */
  readonly executions = new Counter({
    name: 'gateway_executions_total',
    help: 'With EXECUTION_ENGINE=compiled: query and mutation executions over HTTP, by engine (compiled, graphql-js) and the reason graphql-js ran (ftv1-trace, nested-variable, not-compiled, first-sighting, too-large; none when compiled).',
    labelNames: ['engine', 'reason'] as const,
    registers: [this.registry],
  });

  /** With compiled execution: documents kept (compiled, or marked to run on graphql-js), trusted ones apart (read at scrape time). */
  readonly compiledDocuments: Gauge<'trusted'> = new Gauge({
    name: 'gateway_compiled_documents',
    help: 'With EXECUTION_ENGINE=compiled: documents kept compiled (or marked to run on graphql-js), by whether they are trusted documents (kept always) or within COMPILED_DOCUMENTS_MAX_BYTES.',
    labelNames: ['trusted'] as const,
    registers: [this.registry],
    collect: () => this.#collectCompiled(),
  });

  /** Their estimated bytes (read at scrape time). */
  readonly compiledDocumentsBytes: Gauge<'trusted'> = new Gauge({
    name: 'gateway_compiled_documents_bytes',
    help: 'With EXECUTION_ENGINE=compiled: estimated bytes the kept documents hold, by whether they are trusted documents; trusted="false" stays within COMPILED_DOCUMENTS_MAX_BYTES.',
    labelNames: ['trusted'] as const,
    registers: [this.registry],
    collect: () => this.#collectCompiled(),
  });

  /** Compiled documents dropped, least recently used first, to stay within the budget. */
  readonly compiledDocumentsEvicted = new Counter({
    name: 'gateway_compiled_documents_evicted_total',
    help: 'With EXECUTION_ENGINE=compiled: kept documents dropped (least recently used first) to stay within COMPILED_DOCUMENTS_MAX_BYTES.',
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

  /** Open graphql-ws sockets (read at scrape time). */
  readonly wsConnections: Gauge = new Gauge({
    name: 'gateway_ws_connections',
    help: 'Open graphql-ws sockets.',
    registers: [this.registry],
    collect: (): void => this.wsConnections.set(this.#ws?.connections() ?? 0),
  });

  /** Open subscriptions per root field, as the live hub counts them (read at scrape time). */
  readonly wsSubscriptions: Gauge<'field'> = new Gauge({
    name: 'gateway_ws_subscriptions',
    help: "Open subscriptions, by root field (the live hub's count).",
    labelNames: ['field'] as const,
    registers: [this.registry],
    collect: () => {
      this.wsSubscriptions.reset();
      for (const [field, n] of Object.entries(this.#ws?.subscriptions() ?? {})) this.wsSubscriptions.set({ field }, n);
    },
  });

  /**
   * Bytes queued for sending, per transport (graphql-ws sockets, SSE and multipart responses): the
   * largest one queue holds, and the sum over all (read at scrape time). The name is graphql-ws's
   * from before the HTTP streams: `transport="ws"` is the series it had.
   */
  readonly wsQueueBytes: Gauge<'aggregate' | 'transport'> = new Gauge({
    name: 'gateway_ws_queue_bytes',
    help: 'Bytes queued for sending to subscribers, by transport (ws, sse, multipart): aggregate="max" (the largest queue) and "sum" (all queues).',
    labelNames: ['aggregate', 'transport'] as const,
    registers: [this.registry],
    collect: () => {
      const none = { max: 0, sum: 0 };
      const streams = this.#streams?.queueBytes();
      for (const transport of QUEUE_TRANSPORTS) {
        const q = (transport === 'ws' ? this.#ws?.queueBytes() : streams?.[transport]) ?? none;
        this.wsQueueBytes.set({ aggregate: 'max', transport }, q.max);
        this.wsQueueBytes.set({ aggregate: 'sum', transport }, q.sum);
      }
    },
  });

  /** Subscribers cut as slow consumers, by transport and {@link SlowConsumerCutReason}. */
  readonly slowConsumerCuts = new Counter({
    name: 'gateway_slow_consumer_cuts_total',
    help: "Subscribers cut as slow consumers (a graphql-ws socket closed 4413, an SSE or multipart stream cut), by transport and reason: queue (its queue past WS_MAX_BUFFERED_BYTES), address (its address's queues past WS_MAX_BUFFERED_BYTES_PER_ADDRESS), hub (past LIVE_MAX_QUEUED results).",
    labelNames: ['transport', 'reason'] as const,
    registers: [this.registry],
  });

  /** Sockets closed, by close code (the gateway's when it closed them: 1012, 4413, 4403 …; else the peer's). */
  readonly wsCloses = new Counter({
    name: 'gateway_ws_closes_total',
    help: 'graphql-ws sockets closed, by close code.',
    labelNames: ['code'] as const,
    registers: [this.registry],
  });

  /**
   * Upgrades and subscriptions refused, by code (ORIGIN_NOT_ALLOWED, TOO_MANY_CONNECTIONS,
   * SUBSCRIPTION_LIMIT …): graphql-ws's, and those of SSE and multipart streams (server/streams/).
   */
  readonly wsRefusals = new Counter({
    name: 'gateway_ws_refusals_total',
    help: 'Subscriptions refused (graphql-ws upgrades and subscriptions, SSE and multipart streams), by error code.',
    labelNames: ['code'] as const,
    registers: [this.registry],
  });

  /** Subscriptions streaming over HTTP, by transport (read at scrape time; graphql-ws ones are `gateway_ws_subscriptions`). */
  readonly streamSubscriptions: Gauge<'transport'> = new Gauge({
    name: 'gateway_stream_subscriptions',
    help: 'Subscriptions open over HTTP streams, by transport (sse, multipart).',
    labelNames: ['transport'] as const,
    registers: [this.registry],
    collect: () => {
      const open = this.#streams?.subscriptions() ?? { sse: 0, multipart: 0 };
      for (const transport of ['sse', 'multipart'] as const)
        this.streamSubscriptions.set({ transport }, open[transport]);
    },
  });

  /** Messages not sent because their socket was already closing. */
  readonly wsDropped = new Counter({
    name: 'gateway_ws_messages_dropped_total',
    help: 'graphql-ws messages dropped because their socket was closing or closed.',
    registers: [this.registry],
  });

  /** Log lines dropped because stdout did not take them and the log buffer was full (`LOG_MAX_BUFFER_BYTES`). */
  readonly logLinesDropped = new Counter({
    name: 'gateway_log_lines_dropped_total',
    help: 'Log lines dropped because stdout was not taking them and LOG_MAX_BUFFER_BYTES were already pending.',
    registers: [this.registry],
  });

  /** Each backend service's circuit breaker (read at scrape time). */
  readonly breakerState: Gauge<'backend' | 'service'> = new Gauge({
    name: 'gateway_backend_breaker_state',
    help: 'Circuit breaker of each backend service endpoint: 0 = closed, 1 = half-open, 2 = open.',
    labelNames: ['backend', 'service'] as const,
    registers: [this.registry],
    collect: () => {
      this.breakerState.reset();
      for (const b of this.#breakers?.statuses() ?? [])
        this.breakerState.set({ backend: b.backend, service: b.service }, BREAKER_GAUGE[b.state]);
    },
  });

  #ws: WebSocketMetricsSource | undefined;
  #streams: StreamMetricsSource | undefined;
  #compiled: (() => CompiledDocumentsStats) | undefined;
  #breakers: BreakerBoard | undefined;

  /** The live hub's counters and watcher gauges. */
  readonly live = new LiveHubMetrics(this.registry);
  readonly replication = new ReplicationMetrics(this.registry);
  readonly doctor = new DoctorMetrics(this.registry);

  constructor(
    options: { /** Process metrics (CPU, memory, event loop). @default true */ processMetrics?: boolean } = {},
  ) {
    // Unprefixed (`process_cpu_seconds_total`, `nodejs_heap_size_used_bytes`, …): the names stock
    // Node.js dashboards and alerts query. The gateway's own metrics keep `gateway_`.
    if (options.processMetrics ?? true) collectDefaultMetrics({ register: this.registry });
    // Every series from the start, so that a rate or an alert sees the first cut.
    for (const transport of QUEUE_TRANSPORTS)
      for (const reason of CUT_REASONS) this.slowConsumerCuts.inc({ transport, reason }, 0);
  }

  /** The socket layer reports its gauges through `source` from now on. */
  observeWebSockets(source: WebSocketMetricsSource): void {
    this.#ws = source;
  }

  /** The HTTP stream transports report their gauge through `source` from now on. */
  observeStreams(source: StreamMetricsSource): void {
    this.#streams = source;
  }

  /** Compiled execution reports what it keeps through `stats` from now on. */
  observeCompiledDocuments(stats: () => CompiledDocumentsStats): void {
    this.#compiled = stats;
  }

  /** The compiled-document gauges (each gauge's scrape sets both: one reading). */
  #collectCompiled(): void {
    if (!this.#compiled) return;
    const s = this.#compiled();
    this.compiledDocuments.set({ trusted: 'false' }, s.documents);
    this.compiledDocuments.set({ trusted: 'true' }, s.trustedDocuments);
    this.compiledDocumentsBytes.set({ trusted: 'false' }, s.bytes);
    this.compiledDocumentsBytes.set({ trusted: 'true' }, s.trustedBytes);
  }

  /** `/metrics` shows the breakers of `board` from now on. */
  observeBreakers(board: BreakerBoard): void {
    this.#breakers = board;
  }

  /** Transport hook: one record per finished backend call. */
  readonly recordCall = (r: CallRecord): void => {
    this.backendCalls.inc({ backend: r.backend, endpoint: r.endpoint, status: String(r.status) });
    this.backendSeconds.observe({ backend: r.backend, endpoint: r.endpoint }, r.durationMs / 1000);
  };

  recordOperation(operation: string, type: string, outcome: OperationOutcome, seconds: number): void {
    this.operations.inc({ operation, type, outcome });
    this.operationSeconds.observe({ operation, type }, seconds);
  }
}
