/**
 * Reading one configuration value (from the environment, where everything is a string, or from
 * the config file): the shared rules and the one error type. Imports nothing of the gateway, so
 * every config module can use it without a cycle.
 */

export { ConfigError, numberSetting } from '../adapters/contract/settings';
import { ConfigError, numberSetting } from '../adapters/contract/settings';

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

/** One numeric setting of a group: its key in the file's object, its environment variable, bounds. */
export type NumberSettingSpec<K extends string> = readonly [key: K, envName: string, min: number, max: number];

/**
 * A group of numeric settings from the environment (wins) and the file's `group` object, over
 * `defaults`; unknown keys in the file (other than `extraKeys`) are refused.
 * @throws ConfigError naming the first bad setting
 */
export function numberGroup<K extends string, T extends Record<K, number>>(
  env: NodeJS.ProcessEnv,
  file: Record<string, unknown>,
  group: string,
  specs: ReadonlyArray<NumberSettingSpec<K>>,
  defaults: T,
  extraKeys: readonly string[] = [],
): { values: T; raw: Record<string, unknown> } {
  const raw = file[group];
  if (raw !== undefined && raw !== null && (typeof raw !== 'object' || Array.isArray(raw))) throw new ConfigError(group, `must be an object like { "${specs[0]![0]}": ${defaults[specs[0]![0]]} }`);
  const f = (raw ?? {}) as Record<string, unknown>;
  const known = new Set<string>([...specs.map(([k]) => k), ...extraKeys]);
  for (const k of Object.keys(f)) if (!known.has(k)) throw new ConfigError(`${group}.${k}`, `is not a known setting (known: ${[...known].join(', ')})`);
  const values = { ...defaults };
  for (const [key, envName, min, max] of specs) {
    const fromEnv = env[envName]?.trim() ? env[envName] : undefined;
    const value = fromEnv ?? f[key];
    if (value !== undefined) (values as Record<K, number>)[key] = numberSetting(value, fromEnv !== undefined ? envName : `${group}.${key}`, min, max);
  }
  return { values, raw: f };
}

/**
 * A list of browser origins (scheme://host[:port], no path or trailing slash) or `*`, from a
 * comma-separated string or a list. @throws ConfigError naming `setting`
 */
export function originList(value: unknown, setting: string): string[] {
  const list = typeof value === 'string' ? value.split(',') : value;
  if (!Array.isArray(list)) throw new ConfigError(setting, 'must be a list of origins (or a comma-separated string)');
  return list.map((o: unknown) => {
    const t = typeof o === 'string' ? o.trim() : o;
    if (t === '*') return t;
    let u: URL | undefined;
    try {
      u = typeof t === 'string' ? new URL(t) : undefined;
    } catch {
      u = undefined;
    }
    if (!u || (u.protocol !== 'http:' && u.protocol !== 'https:') || u.origin !== t) {
      throw new ConfigError(setting, `${JSON.stringify(o)} is not an origin: scheme://host[:port] without path or trailing slash, e.g. https://app.example.com, or *`);
    }
    return t;
  });
}
