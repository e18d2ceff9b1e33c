/**
 * Settings of the live path (docs/subscriptions.md): the event log's retention and the hub's
 * access cache and queues. Environment (wins) or the config file's `live` object; docs/configuration.md
 * lists them.
 */
import { numberGroup, type NumberSettingSpec } from './config-values';

export interface LiveConfig {
  /** Events the log keeps; a cursor older than the oldest kept gets CURSOR_EXPIRED. @default 10000 (env `LIVE_EVENT_LOG_MAX_EVENTS`) */
  eventLogMaxEvents: number;
  /** Longest an event is kept, in ms. @default 900000 (15 min; env `LIVE_EVENT_LOG_RETENTION_MS`) */
  eventLogRetentionMs: number;
  /** Longest a subscriber's proved access to a namespace or project is reused, in ms: a revoked token stops receiving within it. @default 30000 (env `LIVE_ACCESS_TTL_MS`) */
  accessTtlMs: number;
  /** Results queued per subscription before it is dropped as a slow consumer (4413). @default 1000 (env `LIVE_MAX_QUEUED`) */
  maxQueued: number;
  /** Longest a new subscription waits for its watchers to finish reading a view before SUBSCRIBED goes out, in ms. @default 10000 (env `LIVE_WATCHER_WAIT_MS`) */
  watcherWaitMs: number;
  /** Subscriptions open at once from one client address (IPv6 by /64), across sockets and transports; the next gets SUBSCRIPTION_LIMIT. @default 1000 (env `LIVE_MAX_SUBSCRIPTIONS_PER_ADDRESS`) */
  maxSubscriptionsPerAddress: number;
  /** Bytes of id, query, variables and operation name one address's open subscriptions may keep. @default 4194304 (env `LIVE_MAX_SUBSCRIPTION_BYTES_PER_ADDRESS`) */
  maxSubscriptionBytesPerAddress: number;
  /** Bytes of id, query, variables and operation name one subscription may keep. @default 16384 (env `LIVE_MAX_SUBSCRIPTION_BYTES`) */
  maxSubscriptionBytes: number;
  /** Credential checks the subscription starts of one address may send per 10 s (cache hits are free). @default 100 (env `LIVE_MAX_START_CHECKS_PER_ADDRESS`) */
  maxStartChecksPerAddress: number;
}

export const LIVE_DEFAULTS: Readonly<LiveConfig> = Object.freeze({ eventLogMaxEvents: 10_000, eventLogRetentionMs: 900_000, accessTtlMs: 30_000, maxQueued: 1000, watcherWaitMs: 10_000,
  maxSubscriptionsPerAddress: 1000, maxSubscriptionBytesPerAddress: 4_194_304, maxSubscriptionBytes: 16_384, maxStartChecksPerAddress: 100 });

const NUMBERS: ReadonlyArray<NumberSettingSpec<keyof LiveConfig>> = [
  ['eventLogMaxEvents', 'LIVE_EVENT_LOG_MAX_EVENTS', 1, 10_000_000],
  ['eventLogRetentionMs', 'LIVE_EVENT_LOG_RETENTION_MS', 1000, 7 * 24 * 3_600_000],
  ['accessTtlMs', 'LIVE_ACCESS_TTL_MS', 0, 3_600_000],
  ['maxQueued', 'LIVE_MAX_QUEUED', 1, 1_000_000],
  ['watcherWaitMs', 'LIVE_WATCHER_WAIT_MS', 0, 600_000],
  ['maxSubscriptionsPerAddress', 'LIVE_MAX_SUBSCRIPTIONS_PER_ADDRESS', 1, 10_000_000],
  ['maxSubscriptionBytesPerAddress', 'LIVE_MAX_SUBSCRIPTION_BYTES_PER_ADDRESS', 1024, 1024 * 1_048_576],
  ['maxSubscriptionBytes', 'LIVE_MAX_SUBSCRIPTION_BYTES', 256, 64 * 1_048_576],
  ['maxStartChecksPerAddress', 'LIVE_MAX_START_CHECKS_PER_ADDRESS', 1, 1_000_000],
];

/** The `live` group. @throws ConfigError naming the setting */
export function loadLiveConfig(env: NodeJS.ProcessEnv, file: Record<string, unknown>): LiveConfig {
  return numberGroup(env, file, 'live', NUMBERS, { ...LIVE_DEFAULTS }).values;
}
