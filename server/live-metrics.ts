/**
 * The live path's Prometheus metrics (docs/subscriptions.md, "Metrics"): events in and out,
 * executions, slow-consumer drops, access checks, and each watcher's state, lag and view size
 * (read from the hub at scrape time). Open subscriptions per field are `gateway_ws_subscriptions`.
 */
import { Counter, Gauge, type Registry } from 'prom-client';
import type { WatcherState } from '../adapters/contract/watch';
import type { LiveHubOptions, RunningLiveHub } from '../subscriptions/live';

const STATES: readonly WatcherState[] = [
  'STARTING',
  'STREAMING',
  'POLLING',
  'RESYNCING',
  'IDLE',
  'DEGRADED',
  'STOPPED',
];

export class LiveHubMetrics {
  readonly #hub: { current: RunningLiveHub | undefined } = { current: undefined };
  readonly eventsIn: Counter<'backend'>;
  readonly deliveries: Counter<'field'>;
  readonly executions: Counter<'field'>;
  readonly drops: Counter<'field'>;
  readonly accessChecks: Counter<'backend' | 'outcome'>;
  readonly eventReads: Counter;
  readonly eventReadRefusals: Counter<'limit'>;
  readonly eventReadCacheHits: Counter;

  constructor(registry: Registry) {
    const registers = [registry];
    this.eventsIn = new Counter({
      name: 'gateway_live_events_total',
      help: 'Changes the live hub received from the event log, by backend.',
      labelNames: ['backend'] as const,
      registers,
    });
    this.deliveries = new Counter({
      name: 'gateway_live_deliveries_total',
      help: 'Results handed to subscribers, by root field.',
      labelNames: ['field'] as const,
      registers,
    });
    this.executions = new Counter({
      name: 'gateway_live_executions_total',
      help: 'Event executions (one per group of subscribers sharing document, variables and access scope), by root field.',
      labelNames: ['field'] as const,
      registers,
    });
    this.drops = new Counter({
      name: 'gateway_live_slow_consumer_drops_total',
      help: 'Subscriptions dropped for falling more than the queue bound behind, by root field.',
      labelNames: ['field'] as const,
      registers,
    });
    this.accessChecks = new Counter({
      name: 'gateway_live_access_checks_total',
      help: "Subscribers' access checks sent to backends (the cache answers the rest), by outcome.",
      labelNames: ['backend', 'outcome'] as const,
      registers,
    });
    this.eventReads = new Counter({
      name: 'gateway_live_event_reads_total',
      help: "Backend requests subscription events sent with their subscribers' credentials, for fields the watcher's view lacks.",
      registers,
    });
    this.eventReadRefusals = new Counter({
      name: 'gateway_live_event_read_refusals_total',
      help: 'Backend reads subscription events did not send because a read budget was spent (the field is NOT_SERVED_IN_EVENTS), by budget: eventReadsPerCredential, eventReadsPerEvent.',
      labelNames: ['limit'] as const,
      registers,
    });
    this.eventReadCacheHits = new Counter({
      name: 'gateway_live_event_read_cache_hits_total',
      help: 'Plugins and compute servers subscription events took from the per-credential cache instead of reading them.',
      registers,
    });
    const hub = this.#hub;
    const watcherState = new Gauge({
      name: 'gateway_live_watcher_state',
      help: "Each backend watcher's state: 1 for the state it is in, 0 for the others.",
      labelNames: ['backend', 'state'] as const,
      registers,
      collect: () => {
        watcherState.reset();
        for (const s of hub.current?.statuses() ?? [])
          for (const state of STATES)
            watcherState.set({ backend: s.backend, state }, s.watcher?.state === state ? 1 : 0);
      },
    });
    const lag = new Gauge({
      name: 'gateway_live_watcher_lag_seconds',
      help: "How long ago each watcher's view was last known current (absent before its first full read).",
      labelNames: ['backend'] as const,
      registers,
      collect: () => {
        lag.reset();
        for (const s of hub.current?.statuses() ?? [])
          if (s.watcher?.lagMs != null) lag.set({ backend: s.backend }, s.watcher.lagMs / 1000);
      },
    });
    const volumes = new Gauge({
      name: 'gateway_live_watcher_volumes',
      help: "Volumes in each watcher's view.",
      labelNames: ['backend'] as const,
      registers,
      collect: () => {
        volumes.reset();
        for (const s of hub.current?.statuses() ?? [])
          if (s.watcher) volumes.set({ backend: s.backend }, s.watcher.volumes);
      },
    });
    const groups = new Gauge({
      name: 'gateway_live_subscription_groups',
      help: 'Distinct requests (document, operation name, variables) among open volumeChanged/attachmentChanged subscriptions: at most this many executions per event and access scope.',
      registers,
      collect: (): void => groups.set(hub.current?.groups() ?? 0),
    });
  }

  /** The hub's metrics callbacks. */
  hooks(): NonNullable<LiveHubOptions['metrics']> {
    return {
      eventIn: (backend) => this.eventsIn.inc({ backend }),
      eventOut: (field, count = 1) => this.deliveries.inc({ field }, count),
      execution: (field) => this.executions.inc({ field }),
      drop: (field) => this.drops.inc({ field }),
      accessCheck: (backend, outcome) => this.accessChecks.inc({ backend, outcome }),
      eventRead: () => this.eventReads.inc(),
      eventReadRefused: (limit) => this.eventReadRefusals.inc({ limit }),
      eventReadCached: () => this.eventReadCacheHits.inc(),
    };
  }

  /** Reads watcher states from `hub` at scrape time. */
  watch(hub: RunningLiveHub): void {
    this.#hub.current = hub;
  }
}
