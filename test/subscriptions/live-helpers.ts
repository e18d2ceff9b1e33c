/**
 * Live-hub test setup with real parts: simulators on loopback, a registry from
 * server/backends.ts, the real schema, a InProcessEventLog (or the given log) and the hub driven through
 * `hub.subscribe(args)` as graphql-ws would. Changes come from the backends' own watchers
 * (adapters/nomad/watch/, adapters/openstack/watch/) reading with the service credential the
 * backend config carries (Nomad `token`, OpenStack `auth`).
 */
import { execute, parse } from 'graphql';
import type { VolumeBackend } from '../../adapters/contract/backend';
import { createRegistry } from '../../server/backends';
import type { NomadSettings as NomadBackendConfig } from '../../adapters/nomad/settings';
import type { OpenStackSettings as OpenStackBackendConfig } from '../../adapters/openstack/settings';
import { createExecutionContext, type GatewayServices } from '../../domain/context';
import { InProcessIdempotencyStore } from '../../server/idempotency';
import { DEFAULT_LIMITS, ExecutionLimits } from '../../server/limits';
import { buildGatewaySchema } from '../../server/schema';
import { InProcessEventLog, type EventLog, type InProcessEventLogOptions } from '../../subscriptions/events';
import {
  createLiveHub,
  SerializedResult,
  type LiveHubOptions,
  type LiveResult,
  type RunningLiveHub,
} from '../../subscriptions/live';
import type { SharedResultStream, SharedSink } from '../../subscriptions/live/types';
import { OperationTracker } from '../../subscriptions/operations';
import { loadOperation } from '../../domain';
import { gatewayEventFields } from '../../resolvers/event-fields';
import { BACKEND_EVENT_FIELDS } from '../../server/kinds';
import { until } from '../support/until';

export { until };

export type BackendConfig = ({ id: string; url: string } & Partial<NomadBackendConfig>) | OpenStackBackendConfig;

export interface LiveUnderTest {
  hub: RunningLiveHub;
  services: GatewayServices;
  log: EventLog;
  backend(id: string): VolumeBackend;
  /** Resolves once the backend's watcher has a complete, current view. */
  watcherCurrent(id: string): Promise<void>;
  /**
   * Subscribes as graphql-ws would, with these credentials (backend id → token). With `sink`, the
   * stream hands it shared results while the reader waits, as the socket layer's stream guard does
   * (server/ws/stream.ts); they are recorded in `results` too.
   */
  subscribe(
    query: string,
    variables?: Record<string, unknown>,
    tokens?: Record<string, string>,
    sink?: SharedSink,
  ): Promise<Subscription>;
  executions: Record<string, number>;
  /** Runs a query or mutation through the real resolvers with these credentials (no HTTP: the resolver path under test). */
  run(query: string, variables?: Record<string, unknown>, tokens?: Record<string, string>): Promise<any>;
  stop(): Promise<void>;
}

/** A running subscription, read in the background. */
export interface Subscription {
  /** Results so far, parsed (SerializedResult or own result). */
  results: any[];
  /** The raw results (to compare shared objects). */
  raw: LiveResult[];
  /** Set when the stream ended (completed, or threw: `error`). */
  done: boolean;
  error: unknown;
  /** An error result instead of a stream. */
  refused?: any;
  return(): Promise<void>;
}

/**
 * Starts the hub over `backends` (a Nomad one watches with its `token`, an OpenStack one with its
 * `auth`) and waits until every Nomad watcher's first full read is done: what changes afterwards
 * is reported (the first read's volumes are not, as in production). OpenStack watchers stay idle
 * until someone subscribes; wait for them with {@link LiveUnderTest.watcherCurrent}.
 */
export async function startLive(
  backends: BackendConfig[],
  o: { hub?: Partial<LiveHubOptions>; log?: InProcessEventLogOptions; logInstance?: EventLog } = {},
): Promise<LiveUnderTest> {
  const registry = createRegistry(
    backends.map((b) =>
      b.kind === 'openstack'
        ? b
        : { kind: 'nomad' as const, timeoutMs: 5_000, maxConnections: 16, readRetries: 2, ...b },
    ),
  );
  const operations = new OperationTracker({
    changes: (id) => registry.find(id)?.trackedChanges,
    pollMs: 50,
    maxPollMs: 100,
  });
  const services: GatewayServices = { registry, operations, idempotency: new InProcessIdempotencyStore() };
  const schema = buildGatewaySchema();
  const log = o.logInstance ?? new InProcessEventLog(o.log);
  const executions: Record<string, number> = {};
  const hub = createLiveHub({
    log,
    services,
    schema,
    createContext: (r) => createExecutionContext(services, r),
    visibleOperation: (ctx, id) => loadOperation(ctx, id),
    eventFields: gatewayEventFields(BACKEND_EVENT_FIELDS),
    ...o.hub,
    metrics: { execution: (f) => void (executions[f] = (executions[f] ?? 0) + 1), ...o.hub?.metrics },
  });
  services.live = hub.mutations;
  hub.start();
  const subs: Subscription[] = [];
  const watcherCurrent = (id: string): Promise<void> =>
    until(() => hub.watcher(id)?.current === true, `the watcher of ${id} to be current`);
  try {
    for (const b of backends) if (b.kind !== 'openstack' && b.token) await watcherCurrent(b.id);
  } catch (err) {
    await hub.close();
    await operations.close();
    for (const b of registry.all) await b.close();
    throw err;
  }
  return {
    hub,
    watcherCurrent,
    services,
    log,
    executions,
    backend: (id) => registry.forId(id),
    async run(query, variables = {}, tokens = {}) {
      const contextValue = createExecutionContext(services, {
        credentials: new Map(Object.entries(tokens).map(([b, token]) => [b, { token }])),
        limits: new ExecutionLimits(DEFAULT_LIMITS),
      });
      return JSON.parse(
        JSON.stringify(await execute({ schema, document: parse(query), variableValues: variables, contextValue })),
      );
    },
    async subscribe(query, variables = {}, tokens = {}, sink) {
      const contextValue = createExecutionContext(services, {
        credentials: new Map(Object.entries(tokens).map(([b, token]) => [b, { token }])),
        limits: new ExecutionLimits(DEFAULT_LIMITS),
      });
      const r = await hub.subscribe({ schema, document: parse(query), variableValues: variables, contextValue });
      const s: Subscription = { results: [], raw: [], done: false, error: undefined, return: async () => {} };
      if (!(Symbol.asyncIterator in r)) {
        s.refused = JSON.parse(JSON.stringify(r));
        s.done = true;
        return s;
      }
      s.return = async () => void (await r.return());
      if (sink) {
        (r as unknown as SharedResultStream).shareTo({
          sendShared(value) {
            s.raw.push(value);
            s.results.push(JSON.parse(value.json));
            sink.sendShared(value);
          },
        });
      }
      void (async () => {
        try {
          for (;;) {
            const n = await r.next();
            if (n.done) break;
            s.raw.push(n.value);
            s.results.push(
              n.value instanceof SerializedResult ? JSON.parse(n.value.json) : JSON.parse(JSON.stringify(n.value)),
            );
          }
        } catch (err) {
          s.error = err;
        }
        s.done = true;
      })();
      subs.push(s);
      return s;
    },
    async stop() {
      for (const s of subs) await s.return();
      await hub.close();
      await operations.close();
      for (const b of registry.all) await b.close();
    },
  };
}

/** The events (data of the root field) a subscription received, SUBSCRIBED included. */
export const events = (s: Pick<Subscription, 'results'>, field = 'volumeChanged'): any[] =>
  s.results.filter((r) => r.data).map((r) => r.data[field]);
