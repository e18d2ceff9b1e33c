/**
 * The gateway's live hub (docs/subscriptions.md): this gateway's backends' watchers, registered in
 * the watcher directory, an in-process event log, the live settings, and the hub's metrics and logs.
 */
import { inspect } from 'node:util';
import type { GraphQLSchema } from 'graphql';
import { createExecutionContext, type GatewayServices } from '../domain/context';
import type { WatcherDirectory } from '../domain/watchers';
import { loadOperation } from '../domain';
import { InProcessEventLog } from '../subscriptions/events';
import { createLiveHub, type RunningLiveHub } from '../subscriptions/live';
import { LIVE_DEFAULTS, type LiveConfig } from './live-config';
import type { Logger } from './logger';
import type { GatewayMetrics } from './metrics';
import { resolveWsOptions, type WsOptions } from './ws';
import { createLiveReplication, type LiveReplication } from './live-replication';
import type { GatewayRedis } from './redis';
import { defaultReplicaId } from '../subscriptions/leases';
import { gatewayEventFields } from '../resolvers/event-fields';
import { BACKEND_EVENT_FIELDS } from './kinds';
import type { VolumeWatcher } from '../adapters/contract/watch';
import { problemChangeInput, VolumeDoctor } from '../subscriptions/doctor';
import type { ChangeInput } from '../subscriptions/events';
import { DOCTOR_CONFIG_DEFAULTS, type DoctorConfig } from './doctor-config';

/** What {@link createGatewayLiveHub} builds the hub with. */
export interface GatewayLiveHubOptions {
  /** The services every execution uses; each event execution builds its context over them. */
  services: GatewayServices;
  /** Where the hub's feed registers the watchers it starts. */
  watchers: WatcherDirectory;
  /** The executable schema (wrapped by the limits). */
  schema: GraphQLSchema;
  metrics: GatewayMetrics;
  logger: Logger;
  /** Live settings (server/live-config.ts). @default LIVE_DEFAULTS */
  live?: Partial<LiveConfig>;
  /** Socket settings: the per-credential subscription cap is read with them. @default the socket defaults */
  ws?: WsOptions;
  /**
   * With Redis (scale-out), the live path is shared: the event log is a Redis stream, one replica
   * watches each backend under a lease (server/live-replication.ts). @default none: in this process
   */
  redis?: GatewayRedis;
  /** This replica's id, with `redis` (leases, published statuses, operations). */
  replica?: string;
  /** The volume doctor's settings (server/doctor-config.ts). @default on, {@link DOCTOR_CONFIG_DEFAULTS} */
  doctor?: Partial<DoctorConfig>;
}

/** The live hub, across replicas what `/readyz` reports of the replication, and the volume doctor. */
export type GatewayLiveHub = RunningLiveHub & { replication?: LiveReplication; doctor?: VolumeDoctor };

/** A watcher's failure in a log line: an Error's message, a string as it is, anything else as util.inspect shows it. */
const failureText = (err: unknown): string | undefined =>
  err === undefined ? undefined : err instanceof Error ? err.message : typeof err === 'string' ? err : inspect(err);

export function createGatewayLiveHub(o: GatewayLiveHubOptions): GatewayLiveHub {
  const c = { ...LIVE_DEFAULTS, ...o.live };
  const { logger, services } = o;
  const replication = o.redis ? createLiveReplication(o.redis, c, logger, o.replica ?? defaultReplicaId()) : undefined;
  const d = { ...DOCTOR_CONFIG_DEFAULTS, ...o.doctor };
  // Built before the hub, whose feed tells it the watchers' deltas; it asks the hub for the watchers.
  let watcherOf: (backend: string) => VolumeWatcher | undefined = () => undefined;
  let problemsOf: (backend: string, changes: ChangeInput[]) => void = () => undefined;
  const doctor =
    d.enabled === 'on'
      ? new VolumeDoctor({
          backends: services.registry.all,
          watcher: (b) => watcherOf(b),
          holds: replication ? (b) => replication.watchers.holds(b) : undefined,
          store: replication?.problems,
          operations: services.operations,
          intervalMs: d.intervalMs,
          factsTimeoutMs: d.factsTimeoutMs,
          onChanges: (backend, changes) => {
            for (const ch of changes)
              logger.info(
                {
                  backend,
                  change: ch.type,
                  kind: ch.problem.kind,
                  severity: ch.problem.severity,
                  problem: ch.problem.id,
                },
                `volume problem ${ch.type.toLowerCase()}: ${ch.problem.summary}`,
              );
            const w = watcherOf(backend);
            problemsOf(
              backend,
              changes.map((ch) => problemChangeInput(ch, w?.volume(ch.problem.volume))),
            );
          },
          onError: (err, backend) => logger.warn({ backend, err: failureText(err) }, 'volume doctor pass failed'),
          onPass: (backend, stats) => o.metrics.doctor.pass(backend, stats),
        })
      : undefined;
  const hub = createLiveHub({
    observer: doctor,
    log:
      replication?.log ?? new InProcessEventLog({ maxEvents: c.eventLogMaxEvents, retentionMs: c.eventLogRetentionMs }),
    watcherSource: replication?.watchers,
    replica: replication?.replica,
    services,
    watchers: o.watchers,
    createContext: (r) => createExecutionContext(services, r),
    visibleOperation: (ctx, id) => loadOperation(ctx, id),
    schema: o.schema,
    eventFields: gatewayEventFields(BACKEND_EVENT_FIELDS),
    accessTtlMs: c.accessTtlMs,
    maxQueued: c.maxQueued,
    watcherWaitMs: c.watcherWaitMs,
    eventReads: {
      perCredential: c.eventReadsPerCredential,
      perEvent: c.eventReadsPerEvent,
      cacheTtlMs: c.eventReadCacheTtlMs,
      cacheMaxEntries: c.eventReadCacheMaxEntries,
    },
    budget: {
      maxPerAddress: c.maxSubscriptionsPerAddress,
      maxBytesPerAddress: c.maxSubscriptionBytesPerAddress,
      maxBytesPerSubscription: c.maxSubscriptionBytes,
      maxStartChecksPerAddress: c.maxStartChecksPerAddress,
      // Read with the socket settings (WS_MAX_SUBSCRIPTIONS_PER_CREDENTIAL), kept by the hub: its key is the credentials that proved valid.
      maxPerCredential: resolveWsOptions(o.ws).maxSubscriptionsPerCredential,
    },
    metrics: o.metrics.live.hooks(),
    // The watcher's own text goes in `detail`: a log line has one message field, pino's `msg`.
    onWatcherStatus: (s, err) =>
      (err ? logger.warn.bind(logger) : logger.info.bind(logger))(
        { backend: s.backend, state: s.state, source: s.source, detail: s.message ?? undefined, err: failureText(err) },
        'watcher state',
      ),
    onError: (err, where) => logger.error({ err, ...where }, 'live hub error'),
  });
  o.metrics.live.watch(hub);
  if (doctor) {
    watcherOf = (b) => hub.watcher(b);
    problemsOf = (b, changes) => hub.problems(b, changes);
    services.problems = doctor;
    o.metrics.doctor.watch(doctor);
    const start = hub.start.bind(hub);
    const close = hub.close.bind(hub);
    Object.assign(hub, {
      start: () => {
        start();
        doctor.start();
      },
      close: async () => {
        await doctor.stop();
        await close();
      },
    });
  }
  if (replication) o.metrics.replication.watch(replication);
  return Object.assign(hub, { ...(replication ? { replication } : {}), ...(doctor ? { doctor } : {}) });
}
