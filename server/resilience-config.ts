/**
 * Settings that guard the gateway against failing backends (docs/configuration.md "Circuit
 * breakers" and "Readiness"): the breakers (env `BREAKER_*`, file `breaker`), the per-backend
 * deadline of merged lists (in the same group), and what `/readyz` requires (env `READINESS_*`,
 * file `readiness`).
 */
import { BREAKER_DEFAULTS, type BreakerOptions } from '../adapters/http/breaker';
import { DEFAULT_LIST_BACKEND_DEADLINE_MS } from '../adapters/listing';
import { ConfigError, numberGroup, type NumberSettingSpec } from './config-values';
import { READINESS_DEFAULTS, type ReadinessConfig, type ReadinessRequire } from './readiness';

export interface ResilienceConfig {
  breaker: BreakerOptions;
  /** Per-backend deadline of merged lists, ms. @default 5000 (env `BREAKER_LIST_BACKEND_DEADLINE_MS`, file `breaker.listBackendDeadlineMs`) */
  listBackendDeadlineMs: number;
  readiness: ReadinessConfig;
}

type BreakerKey = keyof BreakerOptions | 'listBackendDeadlineMs';

const BREAKER_NUMBERS: ReadonlyArray<NumberSettingSpec<BreakerKey>> = [
  ['failures', 'BREAKER_FAILURES', 1, 1000],
  ['failureRatePercent', 'BREAKER_FAILURE_RATE_PERCENT', 1, 100],
  ['minCalls', 'BREAKER_MIN_CALLS', 1, 100_000],
  ['windowMs', 'BREAKER_WINDOW_MS', 1000, 3_600_000],
  ['openMs', 'BREAKER_OPEN_MS', 100, 3_600_000],
  ['maxOpenMs', 'BREAKER_MAX_OPEN_MS', 100, 3_600_000],
  ['listBackendDeadlineMs', 'BREAKER_LIST_BACKEND_DEADLINE_MS', 100, 600_000],
];

const REQUIRE: readonly ReadinessRequire[] = ['none', 'any', 'all'];

/** The `breaker` and `readiness` groups. @throws ConfigError naming the setting */
export function loadResilienceConfig(env: NodeJS.ProcessEnv, file: Record<string, unknown>): ResilienceConfig {
  const { values } = numberGroup(env, file, 'breaker', BREAKER_NUMBERS, { ...BREAKER_DEFAULTS, listBackendDeadlineMs: DEFAULT_LIST_BACKEND_DEADLINE_MS });
  const { listBackendDeadlineMs, ...breaker } = values;
  if (breaker.maxOpenMs < breaker.openMs) throw new ConfigError(env.BREAKER_MAX_OPEN_MS?.trim() ? 'BREAKER_MAX_OPEN_MS' : 'breaker.maxOpenMs', `must be at least the open time (${breaker.openMs})`);
  const r = numberGroup(env, file, 'readiness', [['probeIntervalMs', 'READINESS_PROBE_INTERVAL_MS', 100, 3_600_000]], { probeIntervalMs: READINESS_DEFAULTS.probeIntervalMs }, ['require']);
  const fromEnv = env.READINESS_REQUIRE?.trim() ? env.READINESS_REQUIRE.trim() : undefined;
  const require = fromEnv ?? r.raw.require ?? READINESS_DEFAULTS.require;
  if (!REQUIRE.includes(require as ReadinessRequire)) {
    throw new ConfigError(fromEnv !== undefined ? 'READINESS_REQUIRE' : 'readiness.require', `must be one of ${REQUIRE.join(', ')} (got ${JSON.stringify(require)})`);
  }
  return { breaker, listBackendDeadlineMs, readiness: { require: require as ReadinessRequire, probeIntervalMs: r.values.probeIntervalMs } };
}
