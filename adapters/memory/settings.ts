/**
 * The memory backend's settings: file keys of its entry in `backends[]`, or
 * `GATEWAY_BACKEND_<ID>_<NAME>` variables (names in {@link MEMORY_ENV_SETTINGS}). No URL.
 */
import type { CommonBackendSettings } from '../contract/module';
import { ConfigError, numberSetting as num } from '../contract/settings';

export interface MemorySettings extends CommonBackendSettings {
  /** JSON data file to start from (`DATA_FILE`). @default none: the default set, or a generated one with `seedVolumes` */
  dataFile?: string;
  /** Write every change back to `dataFile` (`WRITE_BACK`); false keeps changes in memory only. @default false */
  writeBack: boolean;
  /** Generate this many volumes instead of the default set (`SEED_VOLUMES`); ignored with `dataFile`. @default none */
  seedVolumes?: number;
  /** Host attachments per generated volume (`SEED_ATTACHMENTS`). @default 2 */
  seedAttachments: number;
  /** How long create, delete, attach, detach, extend and snapshot changes take, ms (`OPERATION_DELAY_MS`); 0: at once. @default 1000 */
  operationDelayMs: number;
  /** Injected latency of every call, ms (`LATENCY_MS`). @default 0 */
  latencyMs: number;
  /** Up to this much more latency, at random, ms (`LATENCY_JITTER_MS`). @default 0 */
  latencyJitterMs: number;
  /** Share of calls that fail with BACKEND_UNAVAILABLE, 0–1 (`FAILURE_RATE`). @default 0 */
  failureRate: number;
}

/** The kind's own `GATEWAY_BACKEND_<ID>_<NAME>` variables, as file keys. */
export const MEMORY_ENV_SETTINGS: Readonly<Record<string, string>> = Object.freeze({
  DATA_FILE: 'dataFile',
  WRITE_BACK: 'writeBack',
  SEED_VOLUMES: 'seedVolumes',
  SEED_ATTACHMENTS: 'seedAttachments',
  OPERATION_DELAY_MS: 'operationDelayMs',
  LATENCY_MS: 'latencyMs',
  LATENCY_JITTER_MS: 'latencyJitterMs',
  FAILURE_RATE: 'failureRate',
});

export const MEMORY_DEFAULTS = Object.freeze({ writeBack: false, seedAttachments: 2, operationDelayMs: 1000, latencyMs: 0, latencyJitterMs: 0, failureRate: 0 });

// The server's boolean reader lives in server/, which adapters may not import; this one follows its
// loose rule (true/1/on/yes, false/0/off/no, any case).
function bool(value: unknown, setting: string): boolean {
  if (typeof value === 'boolean') return value;
  const s = typeof value === 'string' ? value.trim().toLowerCase() : '';
  if (['true', '1', 'on', 'yes'].includes(s)) return true;
  if (['false', '0', 'off', 'no'].includes(s)) return false;
  throw new ConfigError(setting, `must be true or false (got ${JSON.stringify(value)})`);
}

/** @throws ConfigError naming the setting (`where.key`) */
export function parseMemorySettings(raw: Record<string, unknown>, common: CommonBackendSettings, where: string): MemorySettings {
  const at = (key: string): string => `${where}.${key}`;
  const opt = <T>(key: string, read: (v: unknown, s: string) => T): T | undefined => (raw[key] === undefined || raw[key] === '' ? undefined : read(raw[key], at(key)));
  const dataFile = opt('dataFile', (v, s) => {
    if (typeof v !== 'string') throw new ConfigError(s, 'must be a file path');
    return v;
  });
  const writeBack = opt('writeBack', bool) ?? MEMORY_DEFAULTS.writeBack;
  if (writeBack && !dataFile) throw new ConfigError(at('writeBack'), 'needs dataFile (the file to write back to)');
  return {
    ...common,
    dataFile,
    writeBack,
    seedVolumes: opt('seedVolumes', (v, s) => num(v, s, 0, 1_000_000)),
    seedAttachments: opt('seedAttachments', (v, s) => num(v, s, 0, 100)) ?? MEMORY_DEFAULTS.seedAttachments,
    operationDelayMs: opt('operationDelayMs', (v, s) => num(v, s, 0, 3_600_000)) ?? MEMORY_DEFAULTS.operationDelayMs,
    latencyMs: opt('latencyMs', (v, s) => num(v, s, 0, 600_000)) ?? MEMORY_DEFAULTS.latencyMs,
    latencyJitterMs: opt('latencyJitterMs', (v, s) => num(v, s, 0, 600_000)) ?? MEMORY_DEFAULTS.latencyJitterMs,
    failureRate: opt('failureRate', (v, s) => num(v, s, 0, 1, false)) ?? MEMORY_DEFAULTS.failureRate,
  };
}
