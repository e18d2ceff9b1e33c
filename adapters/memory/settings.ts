/**
 * The memory backend's settings: file keys of its entry in `backends[]`, or
 * `GATEWAY_BACKEND_<ID>_<NAME>` variables, declared once in {@link MEMORY_SETTINGS}. No URL.
 */
import type { CommonBackendSettings } from '../contract/module';
import {
  boolean,
  ConfigError,
  decimal,
  integer,
  readGroup,
  setting,
  text,
  type SettingValues,
} from '../contract/settings';

/** The kind's own settings: file keys of its entry, `env` after `GATEWAY_BACKEND_<ID>_`. */
export const MEMORY_SETTINGS = {
  dataFile: setting({
    env: 'DATA_FILE',
    rule: text({ message: 'must be a file path' }),
    doc: 'memory: JSON data file to start from (docs/memory.md); none: the default set, or a generated one with seedVolumes.',
  }),
  writeBack: setting({
    env: 'WRITE_BACK',
    rule: boolean(),
    default: false,
    doc: 'memory: write every change back to dataFile (needs it); false keeps changes in memory until restart.',
  }),
  seedVolumes: setting({
    env: 'SEED_VOLUMES',
    rule: integer(0, 1_000_000),
    doc: 'memory, without dataFile: generate this many volumes instead of the default set.',
  }),
  seedAttachments: setting({
    env: 'SEED_ATTACHMENTS',
    rule: integer(0, 100),
    default: 2,
    doc: 'memory: host attachments per generated volume.',
  }),
  operationDelayMs: setting({
    env: 'OPERATION_DELAY_MS',
    rule: integer(0, 3_600_000),
    default: 1000,
    doc: 'memory: how long create, delete, attach, detach, extend and snapshot changes take, ms; 0: done before the mutation answers.',
  }),
  stuckTransitionMs: setting({
    env: 'STUCK_TRANSITION_MS',
    rule: integer(1, 86_400_000),
    doc: 'memory: the doctor reports a volume held in a transition (creating, attaching, detaching …) longer than this, ms, as STUCK_TRANSITION; default 3 × operationDelayMs, at least 10000 (a change always ends after one delay).',
  }),
  stuckClaimMs: setting({
    env: 'STUCK_CLAIM_MS',
    rule: integer(1, 86_400_000),
    doc: 'memory: the doctor reports an attachment held this long, ms, for a workload that is finished or gone as STUCK_CLAIM; default 3 × operationDelayMs, at least 10000 (its release is one detach).',
  }),
  diagnosisGraceMs: setting({
    env: 'DIAGNOSIS_GRACE_MS',
    rule: integer(1, 86_400_000),
    doc: "memory: how long an unhealthy host plugin or a host's record that disagrees with the volume's may last before the doctor reports it, ms; default 3 × operationDelayMs, at least 10000.",
  }),
  latencyMs: setting({
    env: 'LATENCY_MS',
    rule: integer(0, 600_000),
    default: 0,
    doc: 'memory: injected latency of every call, ms.',
  }),
  latencyJitterMs: setting({
    env: 'LATENCY_JITTER_MS',
    rule: integer(0, 600_000),
    default: 0,
    doc: 'memory: up to this much more latency, at random, ms.',
  }),
  failureRate: setting({
    env: 'FAILURE_RATE',
    rule: decimal(0, 1),
    default: 0,
    doc: 'memory: share of calls that fail with BACKEND_UNAVAILABLE, 0-1; they count for the circuit breaker.',
  }),
} as const;

/** A memory backend's settings: the common ones and {@link MEMORY_SETTINGS} (meanings and defaults there). */
export type MemorySettings = CommonBackendSettings & SettingValues<typeof MEMORY_SETTINGS>;

/** @throws ConfigError naming the setting (`where.key`) */
export function parseMemorySettings(
  raw: Record<string, unknown>,
  common: CommonBackendSettings,
  where: string,
): MemorySettings {
  // A blank value (an empty variable) reads as unset.
  const given = Object.fromEntries(Object.entries(raw).filter(([, v]) => v !== ''));
  const v = readGroup(MEMORY_SETTINGS, { file: given, path: where });
  if (v.writeBack && !v.dataFile)
    throw new ConfigError(`${where}.writeBack`, 'needs dataFile (the file to write back to)');
  return { ...common, ...v };
}
