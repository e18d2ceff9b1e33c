/**
 * Settings of the live path (docs/subscriptions.md): the event log's retention and the hub's
 * access cache and queues. Declared once in {@link LIVE_SETTINGS} (env `LIVE_…`, file `live`);
 * docs/configuration.md lists them. Their defaults are the ones the log, the hub and the budget use
 * when built in code (subscriptions/).
 */
import { EVENT_LOG_DEFAULTS } from '../subscriptions/events';
import { BUDGET_DEFAULTS, EVENT_READ_DEFAULTS, LIVE_HUB_DEFAULTS } from '../subscriptions/live';
import { LEASE_DEFAULTS } from '../subscriptions/leases';
import { REPLICATION_DEFAULTS } from '../subscriptions/replication';
import { defaultsOf, integer, readGroup, setting, type SettingValues } from '../adapters/contract/settings';

/** The `live` group. */
export const LIVE_SETTINGS = {
  eventLogMaxEvents: setting({
    env: 'LIVE_EVENT_LOG_MAX_EVENTS',
    rule: integer(1, 10_000_000),
    default: EVENT_LOG_DEFAULTS.maxEvents,
    doc: 'Events the log keeps; a cursor older than the oldest kept gets CURSOR_EXPIRED.',
  }),
  eventLogRetentionMs: setting({
    env: 'LIVE_EVENT_LOG_RETENTION_MS',
    rule: integer(1000, 7 * 24 * 3_600_000),
    default: EVENT_LOG_DEFAULTS.retentionMs,
    doc: 'Longest an event is kept, in ms (15 min).',
  }),
  leaseTtlMs: setting({
    env: 'LIVE_LEASE_TTL_MS',
    rule: integer(500, 600_000),
    default: LEASE_DEFAULTS.ttlMs,
    doc: "With REDIS_URL: lifetime of a replica's lease on a backend's watcher, in ms; when its holder dies another replica takes the watcher over within about this long (a SIGTERM hands it over at once).",
  }),
  snapshotEveryMs: setting({
    env: 'LIVE_SNAPSHOT_EVERY_MS',
    rule: integer(100, 3_600_000),
    default: REPLICATION_DEFAULTS.snapshotEveryMs,
    doc: 'With REDIS_URL: how often the replica that watches a backend writes its view to Redis while it changes, in ms: a replica that starts (or lost its place) begins from it.',
  }),
  accessTtlMs: setting({
    env: 'LIVE_ACCESS_TTL_MS',
    rule: integer(0, 3_600_000),
    default: LIVE_HUB_DEFAULTS.accessTtlMs,
    doc: "Longest a subscriber's proved access to a namespace or project is reused, in ms: a revoked token stops receiving within it.",
  }),
  maxQueued: setting({
    env: 'LIVE_MAX_QUEUED',
    rule: integer(1, 1_000_000),
    default: LIVE_HUB_DEFAULTS.maxQueued,
    doc: 'Results queued per subscription before it is dropped as a slow consumer (4413).',
  }),
  watcherWaitMs: setting({
    env: 'LIVE_WATCHER_WAIT_MS',
    rule: integer(0, 600_000),
    default: LIVE_HUB_DEFAULTS.watcherWaitMs,
    doc: 'Longest a new subscription waits for its watchers to finish reading a view before SUBSCRIBED goes out, in ms.',
  }),
  maxSubscriptionsPerAddress: setting({
    env: 'LIVE_MAX_SUBSCRIPTIONS_PER_ADDRESS',
    rule: integer(1, 10_000_000),
    default: BUDGET_DEFAULTS.maxPerAddress,
    doc: 'Subscriptions open at once from one client address (IPv6 by /64), across sockets and transports; the next gets SUBSCRIPTION_LIMIT.',
  }),
  maxSubscriptionBytesPerAddress: setting({
    env: 'LIVE_MAX_SUBSCRIPTION_BYTES_PER_ADDRESS',
    rule: integer(1024, 1024 * 1_048_576),
    default: BUDGET_DEFAULTS.maxBytesPerAddress,
    doc: "Bytes of id, query, variables and operation name one address's open subscriptions may keep.",
  }),
  maxSubscriptionBytes: setting({
    env: 'LIVE_MAX_SUBSCRIPTION_BYTES',
    rule: integer(256, 64 * 1_048_576),
    default: BUDGET_DEFAULTS.maxBytesPerSubscription,
    doc: 'Bytes of id, query, variables and operation name one subscription may keep.',
  }),
  maxStartChecksPerAddress: setting({
    env: 'LIVE_MAX_START_CHECKS_PER_ADDRESS',
    rule: integer(1, 1_000_000),
    default: BUDGET_DEFAULTS.maxStartChecksPerAddress,
    doc: 'Credential checks the subscription starts of one address may send per 10 s (cache hits are free).',
  }),
  eventReadsPerCredential: setting({
    env: 'LIVE_EVENT_READS_PER_CREDENTIAL',
    rule: integer(0, 10_000),
    default: EVENT_READ_DEFAULTS.perCredential,
    doc: "Backend requests one event may send for the subscribers with the same credentials, for fields the watcher's view lacks (a plugin, a compute server's name, health, an operation's target); past it such a field is NOT_SERVED_IN_EVENTS.",
  }),
  eventReadsPerEvent: setting({
    env: 'LIVE_EVENT_READS_PER_EVENT',
    rule: integer(0, 1_000_000),
    default: EVENT_READ_DEFAULTS.perEvent,
    doc: 'Backend requests one event may send for all its subscribers together (a safety valve against thousands of credentials reading for one change); past it NOT_SERVED_IN_EVENTS.',
  }),
  eventReadCacheTtlMs: setting({
    env: 'LIVE_EVENT_READ_CACHE_TTL_MS',
    rule: integer(0, 3_600_000),
    default: EVENT_READ_DEFAULTS.cacheTtlMs,
    doc: 'Longest a plugin or compute server read for an event is reused by later events for the same credential, in ms (kept per credential, never shared); 0: not kept.',
  }),
  eventReadCacheMaxEntries: setting({
    env: 'LIVE_EVENT_READ_CACHE_MAX_ENTRIES',
    rule: integer(0, 10_000_000),
    default: EVENT_READ_DEFAULTS.cacheMaxEntries,
    doc: 'Most plugin and server reads that cache keeps, across credentials (least recently used first out).',
  }),
} as const;

/** The live path's settings as read; each key's meaning and default are in {@link LIVE_SETTINGS}. */
export type LiveConfig = SettingValues<typeof LIVE_SETTINGS>;

export const LIVE_DEFAULTS: Readonly<LiveConfig> = Object.freeze(defaultsOf(LIVE_SETTINGS));

/** The `live` group. @throws ConfigError naming the setting */
export function loadLiveConfig(env: NodeJS.ProcessEnv, file: Record<string, unknown>): LiveConfig {
  return readGroup(LIVE_SETTINGS, { env, file: file.live, path: 'live', strict: true });
}
