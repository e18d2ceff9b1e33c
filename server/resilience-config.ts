/**
 * Settings that guard the gateway against failing backends (docs/configuration.md "Circuit
 * breakers" and "Readiness"): the breakers (env `BREAKER_*`, file `breaker`), the per-backend
 * deadline of merged lists (in the same group), and what `/readyz` requires (env `READINESS_*`,
 * file `readiness`). Declared once in {@link BREAKER_SETTINGS} and {@link READINESS_SETTINGS};
 * their defaults are the ones the breaker, the list merge and readiness use when built in code.
 */
import { BREAKER_DEFAULTS, type BreakerOptions } from '../adapters/contract/breaker';
import { DEFAULT_LIST_BACKEND_DEADLINE_MS } from '../adapters/listing';
import { ConfigError, integer, oneOf, pickValue, readGroup, setting } from '../adapters/contract/settings';
import { READINESS_DEFAULTS, type ReadinessConfig, type ReadinessRequire } from './readiness';

export interface ResilienceConfig {
  breaker: BreakerOptions;
  /** Per-backend deadline of merged lists, ms (`breaker.listBackendDeadlineMs`). */
  listBackendDeadlineMs: number;
  readiness: ReadinessConfig;
}

/** The `breaker` group. */
export const BREAKER_SETTINGS = {
  failures: setting({
    env: 'BREAKER_FAILURES',
    rule: integer(1, 1000),
    default: BREAKER_DEFAULTS.failures,
    doc: 'Failures in a row that open a breaker.',
  }),
  failureRatePercent: setting({
    env: 'BREAKER_FAILURE_RATE_PERCENT',
    rule: integer(1, 100),
    default: BREAKER_DEFAULTS.failureRatePercent,
    doc: 'Share of failed calls in the window that opens it, in percent.',
  }),
  minCalls: setting({
    env: 'BREAKER_MIN_CALLS',
    rule: integer(1, 100_000),
    default: BREAKER_DEFAULTS.minCalls,
    doc: 'Fewest calls in the window before the rate counts.',
  }),
  windowMs: setting({
    env: 'BREAKER_WINDOW_MS',
    rule: integer(1000, 3_600_000),
    default: BREAKER_DEFAULTS.windowMs,
    doc: 'Sliding window of the rate, ms.',
  }),
  openMs: setting({
    env: 'BREAKER_OPEN_MS',
    rule: integer(100, 3_600_000),
    default: BREAKER_DEFAULTS.openMs,
    doc: 'Shortest time a breaker stays open before the background probe may close it, ms; doubles when it opens again within the window after closing.',
  }),
  maxOpenMs: setting({
    env: 'BREAKER_MAX_OPEN_MS',
    rule: integer(100, 3_600_000),
    default: BREAKER_DEFAULTS.maxOpenMs,
    doc: 'Longest such time, ms (at least openMs).',
  }),
  listBackendDeadlineMs: setting({
    env: 'BREAKER_LIST_BACKEND_DEADLINE_MS',
    rule: integer(100, 600_000),
    default: DEFAULT_LIST_BACKEND_DEADLINE_MS,
    doc: "Per-backend deadline of a merged list, all of that backend's pages together, ms: past it the backend is left out as FAILED (BACKEND_TIMEOUT) and the others are answered.",
  }),
} as const;

/** The `readiness` group. */
export const READINESS_SETTINGS = {
  require: setting({
    env: 'READINESS_REQUIRE',
    rule: oneOf<ReadinessRequire>(['none', 'any', 'all']),
    default: READINESS_DEFAULTS.require,
    doc: 'Backends a ready gateway needs `available`: none (readiness of the gateway itself), any (at least one), all (every one); otherwise /readyz answers 503.',
  }),
  probeIntervalMs: setting({
    env: 'READINESS_PROBE_INTERVAL_MS',
    rule: integer(100, 3_600_000),
    default: READINESS_DEFAULTS.probeIntervalMs,
    doc: 'Time from one background probe of each backend and of Redis to the next, ms. The probe is what closes an open breaker: it closes within one interval of the backend answering again.',
  }),
  probeTimeoutMs: setting({
    env: 'READINESS_PROBE_TIMEOUT_MS',
    rule: integer(100, 600_000),
    default: READINESS_DEFAULTS.probeTimeoutMs,
    doc: "Deadline of each request of a backend's background probe, ms (at most the backend's call deadline): a hung backend's probe fails after it, not after the call deadline.",
  }),
} as const;

/** The `breaker` and `readiness` groups. @throws ConfigError naming the setting */
export function loadResilienceConfig(env: NodeJS.ProcessEnv, file: Record<string, unknown>): ResilienceConfig {
  const src = { env, file: file.breaker, path: 'breaker', strict: true };
  const { listBackendDeadlineMs, ...breaker } = readGroup(BREAKER_SETTINGS, src);
  if (breaker.maxOpenMs < breaker.openMs)
    throw new ConfigError(
      pickValue(BREAKER_SETTINGS.maxOpenMs, 'maxOpenMs', src).setting,
      `must be at least the open time (${breaker.openMs})`,
    );
  const readiness = readGroup(READINESS_SETTINGS, { env, file: file.readiness, path: 'readiness', strict: true });
  return { breaker, listBackendDeadlineMs, readiness };
}
