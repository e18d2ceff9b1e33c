/**
 * Reading one configuration value (from the environment, where everything is a string, or from
 * the config file): the shared rules and the one error type. Imports nothing of the gateway, so
 * every config module can use it without a cycle.
 */

/** Configuration is wrong; `setting` names the variable or file key. */
export class ConfigError extends Error {
  constructor(
    readonly setting: string,
    message: string,
  ) {
    super(`${setting}: ${message}`);
    this.name = 'ConfigError';
  }
}

/** A number from `min` to `max` (a whole one unless `integer` is false); strings are parsed. */
export function numberSetting(value: unknown, setting: string, min: number, max: number, integer = true): number {
  const n = typeof value === 'string' && value.trim() !== '' ? Number(value) : value;
  if (typeof n !== 'number' || !Number.isFinite(n) || (integer && !Number.isInteger(n)) || n < min || n > max) {
    throw new ConfigError(setting, `must be a ${integer ? 'whole ' : ''}number from ${min} to ${max} (got ${JSON.stringify(value)})`);
  }
  return n;
}

/** The words a boolean setting takes as strings. */
export interface BooleanWords {
  yes: readonly string[];
  no: readonly string[];
  /** Trim and ignore case. */
  loose: boolean;
}

/** `true`/`1`/`on`/`yes` and `false`/`0`/`off`/`no`, trimmed, any case. */
export const LOOSE_BOOLEAN: BooleanWords = { yes: ['true', '1', 'on', 'yes'], no: ['false', '0', 'off', 'no'], loose: true };
/** Exactly `true`/`1` and `false`/`0` (the HTTP edge's settings). */
export const STRICT_BOOLEAN: BooleanWords = { yes: ['true', '1'], no: ['false', '0'], loose: false };

/** A boolean, or a string one of `words` names. @default words LOOSE_BOOLEAN */
export function booleanSetting(value: unknown, setting: string, words: BooleanWords = LOOSE_BOOLEAN): boolean {
  if (typeof value === 'boolean') return value;
  const raw = typeof value === 'string' ? value : '';
  const s = words.loose ? raw.trim().toLowerCase() : raw;
  if (words.yes.includes(s)) return true;
  if (words.no.includes(s)) return false;
  throw new ConfigError(setting, `must be true or false (got ${JSON.stringify(value)})`);
}
