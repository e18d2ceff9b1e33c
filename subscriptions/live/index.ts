/**
 * The live path (docs/subscriptions.md): `createLiveHub` wires the feed (watchers → event log),
 * the access cache, the subscriber index and the fan-out into a {@link LiveHub} that graphql-ws's
 * `subscribe` calls, plus the `LiveMutations` the mutations tell about accepted attaches/detaches.
 */
import type { GraphQLSchema } from 'graphql';
import type { VolumeWatcher, WatcherStatus } from '../../adapters/contract/watch';
import type { GatewayServices } from '../../domain/context';
import type { WatcherDirectory } from '../../domain/watchers';
import type { ChangeInput, EventLog } from '../events';
import { ACCESS_DEFAULTS, AccessCache } from './access';
import { BUDGET_DEFAULTS, SubscriptionBudget, type SubscriptionBudgetLimits } from './budget';
import { Fanout, type UnexpectedWhere } from './fanout';
import type { EventReadLimits } from './event-read-budget';
import type { EventReadLimit } from '../../adapters/contract/errors';
import { Feed, type FeedOperations, type FeedStatus } from './feed';
import { Hub, type LiveMetrics } from './hub';
import { DEFAULT_MAX_QUEUED } from './stream';
import type { ContextFactory, LiveHub, OperationVisibility } from './types';
import type { LiveMutations } from '../../domain/live-mutations';
import type { EventFieldSources, EventLimits } from './view';
import type { WatcherSource, WatchObserver } from './watcher-source';

export {
  SerializedResult,
  type ContextFactory,
  type LiveHub,
  type LiveResult,
  type OperationVisibility,
  type SubscriberOrigin,
} from './types';
export { BUDGET_DEFAULTS, SubscriptionLimitError, type SubscriptionBudgetLimits } from './budget';
export type { FeedStatus } from './feed';
export type { WatchObserver } from './watcher-source';
export type { LiveMetrics } from './hub';
export type { LiveField } from './spec';
export { EVENT_READ_DEFAULTS, type EventReadLimits } from './event-read-budget';

/**
 * Defaults of {@link createLiveHub}'s options. The gateway's `live` settings (server/live-config.ts)
 * take theirs from here and from {@link BUDGET_DEFAULTS} and the event log's `EVENT_LOG_DEFAULTS`.
 */
export const LIVE_HUB_DEFAULTS = Object.freeze({
  accessTtlMs: ACCESS_DEFAULTS.ttlMs,
  accessTimeoutMs: ACCESS_DEFAULTS.timeoutMs,
  maxQueued: DEFAULT_MAX_QUEUED,
  replayPage: 500,
  watcherWaitMs: 10_000,
});

/** Options of {@link createLiveHub}. */
export interface LiveHubOptions {
  /** The event log (a `InProcessEventLog` in one process). */
  log: EventLog;
  /** Registry, tracker and idempotency store: the same services HTTP executions use. */
  services: GatewayServices;
  /**
   * Builds an execution context over `services` (the server's `createExecutionContext`): an event
   * execution runs in one with no credential that refuses every backend call (view.ts), or, for a
   * document that needs backend reads, in one with the subscriber's credentials (event-reads.ts).
   */
  createContext: ContextFactory;
  /** Reads an operation as the caller may see it, for `operationUpdated` (the `volumeOperation` query's rule). */
  visibleOperation: OperationVisibility;
  /** The executable schema the socket layer validates against (wrapped by the limits). */
  schema: GraphQLSchema;
  /**
   * Where events get each field whose resolver is its own (the resolvers' classification,
   * `gatewayEventFields`): a document that selects a `read` field is executed with its
   * subscribers' credentials, the others from the watcher's view.
   */
  eventFields: EventFieldSources;
  /**
   * Where the feed registers the watchers it starts, for the tracker (watched operations) and the
   * loaders (watch-fed reads). @default a directory of the hub's own
   */
  watchers?: WatcherDirectory;
  /**
   * Where the feed's watchers come from: across replicas, leases and follower views
   * (subscriptions/replication/). @default one watcher per watchable backend in this process
   */
  watcherSource?: WatcherSource;
  /**
   * Also follows the watchers this replica runs, and counts as their listener for demand (the
   * volume doctor: a polling watcher keeps its view current for it). @default none
   */
  observer?: WatchObserver & { demand(backend: string): number };
  /** This replica's id, on the gateway's own announcements. @default 'local' */
  replica?: string;
  /** The tracker as the feed sees it. @default services.operations */
  operations?: FeedOperations;
  /** Longest an access grant is reused, in ms (a grant's `validUntil` may shorten it). @default {@link LIVE_HUB_DEFAULTS} (30000) */
  accessTtlMs?: number;
  /** Deadline of one access check against a backend, in ms. @default {@link LIVE_HUB_DEFAULTS} (10000) */
  accessTimeoutMs?: number;
  /** Most results queued per subscription; past it the stream throws SLOW_CONSUMER. @default {@link LIVE_HUB_DEFAULTS} (1000) */
  maxQueued?: number;
  /** Events per replay page. @default {@link LIVE_HUB_DEFAULTS} (500) */
  replayPage?: number;
  /**
   * Longest a new subscription waits for its watchers to finish reading a view (first read,
   * re-read after idling or a gap) before SUBSCRIBED goes out, in ms. @default {@link LIVE_HUB_DEFAULTS} (10000)
   */
  watcherWaitMs?: number;
  /** The per-address and per-credential subscription budget (budget.ts); unset fields take `BUDGET_DEFAULTS`. */
  budget?: Partial<SubscriptionBudgetLimits>;
  /** Deadline and response cap of one event execution. @default 5000 ms, 1 MiB */
  eventLimits?: EventLimits;
  /** Budgets and cache of the backend reads events make for documents that need them; unset fields take `EVENT_READ_DEFAULTS`. */
  eventReads?: Partial<EventReadLimits>;
  /** Metrics callbacks: subscriptions per field, events in/out, executions, drops. */
  metrics?: LiveMetrics & {
    /** One access check sent to a backend, with its outcome. */
    accessCheck?(backend: string, outcome: 'allowed' | 'denied' | 'unauthenticated' | 'failed'): void;
    /** One backend read an event sent for a document that needs it. */
    eventRead?(): void;
    /** A read an event did not send: its budget `limit` was spent (the field is NOT_SERVED_IN_EVENTS). */
    eventReadRefused?(limit: EventReadLimit): void;
    /** A plugin or server an event took from the per-credential cache instead of reading it. */
    eventReadCached?(): void;
  };
  /** Watcher state changes and source errors (for the log); lag is in `statuses()`. */
  onWatcherStatus?: (s: WatcherStatus, err?: unknown) => void;
  /**
   * Unexpected errors (an event execution that threw, an append that failed); for an execution,
   * `where` says which field and, for one subscriber's own execution, its request id.
   */
  onError?: (err: unknown, where?: UnexpectedWhere) => void;
}

/** The hub plus what the server wires elsewhere. */
export interface RunningLiveHub extends LiveHub {
  /** For `GatewayServices.live`: accepted attaches/detaches. */
  readonly mutations: LiveMutations;
  /** Each backend's watcher status (for /readyz and /metrics: state, lag). */
  statuses(): FeedStatus[];
  /** A backend's running watcher (its status, view and scope; the watcher directory holds the same). */
  watcher(backend: string): VolumeWatcher | undefined;
  /** Appends the volume doctor's changes of a backend to the event log (`volumeProblemChanged`). */
  problems(backend: string, changes: ChangeInput[]): void;
  /**
   * Stops the watchers and, across replicas, releases their leases, so another replica takes them
   * over at once (a SIGTERM, before the drain): subscriptions here keep getting the shared log's events.
   */
  handOver(): Promise<void>;
  /** Starts the watchers (once). */
  start(): void;
  /** Distinct requests (document, operation name, variables) among open event subscriptions. */
  groups(): number;
}

/** Builds the live hub; call `start()` to start the watchers. */
export function createLiveHub(o: LiveHubOptions): RunningLiveHub {
  const metrics = o.metrics ?? {};
  const registry = o.services.registry;
  const d = LIVE_HUB_DEFAULTS;
  const accessTtlMs = o.accessTtlMs ?? d.accessTtlMs;
  const access = new AccessCache({
    ttlMs: accessTtlMs,
    timeoutMs: o.accessTimeoutMs ?? d.accessTimeoutMs,
    onCheck: (backend, outcome) => metrics.accessCheck?.(backend, outcome),
  });
  const fanout = new Fanout({
    schema: o.schema,
    createContext: o.createContext,
    registry,
    access,
    eventLimits: o.eventLimits,
    eventReads: o.eventReads,
    onEventRead: {
      read: () => metrics.eventRead?.(),
      refused: (limit) => metrics.eventReadRefused?.(limit),
      cacheHit: () => metrics.eventReadCached?.(),
    },
    onExecute: (f) => metrics.execution?.(f as never),
    onDeliver: (f, n) => metrics.eventOut?.(f as never, n),
    onUnexpected: o.onError,
  });
  // Undefined until built (the feed it is built with may count subscribers before): none yet.
  let hub: Hub | undefined = undefined;
  const feed = new Feed({
    registry,
    watchers: o.watchers,
    log: o.log,
    operations: o.operations ?? o.services.operations,
    subscribers: (b) => (hub?.subscribersFor(b) ?? 0) + (o.observer?.demand(b) ?? 0),
    observer: o.observer,
    onStatus: o.onWatcherStatus,
    onError: o.onError,
    source: o.watcherSource,
    replica: o.replica,
  });
  hub = new Hub({
    log: o.log,
    registry,
    feed,
    access,
    fanout,
    visibleOperation: o.visibleOperation,
    eventFields: o.eventFields,
    budget: new SubscriptionBudget({ ...BUDGET_DEFAULTS, ...o.budget }),
    maxQueued: o.maxQueued ?? d.maxQueued,
    replayPage: o.replayPage ?? d.replayPage,
    watcherWaitMs: o.watcherWaitMs ?? d.watcherWaitMs,
    metrics,
  });
  const h = hub;
  let started = false;
  const sweep = setInterval(() => access.sweep(), Math.max(1000, accessTtlMs));
  sweep.unref();
  return {
    mutations: feed,
    statuses: () => feed.statuses(),
    watcher: (backend) => feed.watcher(backend),
    problems: (backend, changes) => feed.problems(backend, changes),
    start: () => {
      if (started) return;
      started = true;
      feed.start();
    },
    subscribe: (args, origin) => h.subscribe(args, origin),
    counts: () => h.counts(),
    groups: () => h.groups,
    handOver: () => feed.stop(),
    close: async () => {
      clearInterval(sweep);
      await h.close();
      await o.log.close?.();
    },
  };
}
