/**
 * The config definition's building blocks: a setting is declared once — its environment
 * variable, its config-file key, its rule (type and bounds), its default and its description —
 * and the readers, the unknown-name check (server/config-names.ts) and the config file's JSON
 * Schema (server/config-schema.ts) are derived from it. Here, in the contract, so a backend
 * module declares its own settings with the same blocks and never imports `server/`.
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
    throw new ConfigError(
      setting,
      `must be a ${integer ? 'whole ' : ''}number from ${min} to ${max} (got ${JSON.stringify(value)})`,
    );
  }
  return n;
}

/** The part of JSON Schema (draft 2020-12) the generated config schema uses. */
export interface JsonSchema {
  type?: 'object' | 'array' | 'string' | 'integer' | 'number' | 'boolean';
  description?: string;
  default?: unknown;
  properties?: Record<string, JsonSchema>;
  additionalProperties?: boolean;
  required?: string[];
  items?: JsonSchema;
  oneOf?: JsonSchema[];
  anyOf?: JsonSchema[];
  enum?: readonly unknown[];
  const?: unknown;
  minimum?: number;
  maximum?: number;
  minLength?: number;
  maxLength?: number;
  pattern?: string;
}

/** How one setting's value is read: from a string (the environment) or a JSON value (the file). */
export interface Rule<T> {
  /** @throws ConfigError naming `setting` */
  parse(value: unknown, setting: string): T;
  /** The value's JSON Schema in the config file. */
  readonly schema: JsonSchema;
}

/** One setting, declared once. */
export interface Setting<T> {
  /**
   * Environment variable. Gateway settings give the whole name (`MAX_DEPTH`); a backend's give
   * the part after `GATEWAY_BACKEND_<ID>_` (`TOKEN`). @default none: file only
   */
  readonly env?: string;
  /** Whether the config file has it, at its key in the definition. @default true */
  readonly file: boolean;
  readonly rule: Rule<Exclude<T, undefined>>;
  /** Taken when neither the environment nor the file gives a value; undefined: none (or computed, see `defaultNote`). */
  readonly default: T;
  /** The default in words, when the reader computes it (`30000, at least headersTimeoutMs`). */
  readonly defaultNote?: string;
  /** What it does, for people: its description in the JSON Schema; the readers' types point here. */
  readonly doc: string;
}

/** Settings by key, nested as in the config file (`http.rateLimit.caller.burst`). */
export interface SettingsGroup {
  readonly [key: string]: Setting<unknown> | SettingsGroup;
}

/** The values a group reads to. */
export type SettingValues<G> = { -readonly [K in keyof G]: G[K] extends Setting<infer T> ? T : SettingValues<G[K]> };

interface SettingInit<T> {
  env?: string;
  /** @default true */
  file?: boolean;
  rule: Rule<T>;
  defaultNote?: string;
  doc: string;
}

/** Declares a setting with a default. */
export function setting<T>(o: SettingInit<T> & { default: T }): Setting<T>;
/** Declares a setting without one: it reads as undefined when not given. */
export function setting<T>(o: SettingInit<T>): Setting<T | undefined>;
export function setting<T>(o: SettingInit<T> & { default?: T }): Setting<T | undefined> {
  return Object.freeze({ ...o, file: o.file ?? true, default: o.default }) as Setting<T | undefined>;
}

export const isSetting = (x: Setting<unknown> | SettingsGroup): x is Setting<unknown> =>
  typeof (x as Setting<unknown>).rule?.parse === 'function';

/** Each setting of a group with its dotted key below it, depth first in declaration order. */
export function settingLeaves(group: SettingsGroup, prefix = ''): Array<{ path: string; setting: Setting<unknown> }> {
  return Object.entries(group).flatMap(([key, node]) => {
    const path = prefix === '' ? key : `${prefix}.${key}`;
    return isSetting(node) ? [{ path, setting: node }] : settingLeaves(node, path);
  });
}

/** A default as a value of its own: a list default (`[]`) is copied, so no reader shares the declaration's. */
const fresh = <T>(d: T): T => (Array.isArray(d) ? ([...d] as T) : d);

/** A group's defaults, as its values. */
export function defaultsOf<G extends SettingsGroup>(group: G): SettingValues<G> {
  const out: Record<string, unknown> = {};
  for (const [key, node] of Object.entries(group)) out[key] = isSetting(node) ? fresh(node.default) : defaultsOf(node);
  return out as SettingValues<G>;
}

// ---- Rules ------------------------------------------------------------------------------------

/** A number from `min` to `max`; strings are parsed. */
export const integer = (min: number, max: number): Rule<number> => ({
  parse: (v, s) => numberSetting(v, s, min, max),
  schema: { type: 'integer', minimum: min, maximum: max },
});

/** A number from `min` to `max`, decimals allowed. */
export const decimal = (min: number, max: number): Rule<number> => ({
  parse: (v, s) => numberSetting(v, s, min, max, false),
  schema: { type: 'number', minimum: min, maximum: max },
});

/** The words a boolean setting takes as strings. */
export interface BooleanWords {
  yes: readonly string[];
  no: readonly string[];
  /** Trim and ignore case. */
  loose: boolean;
}

/** `true`/`1`/`on`/`yes` and `false`/`0`/`off`/`no`, trimmed, any case. */
export const LOOSE_BOOLEAN: BooleanWords = {
  yes: ['true', '1', 'on', 'yes'],
  no: ['false', '0', 'off', 'no'],
  loose: true,
};
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

/** true or false (in the file a JSON boolean; in the environment one of `words`). */
export const boolean = (words: BooleanWords = LOOSE_BOOLEAN): Rule<boolean> => ({
  parse: (v, s) => booleanSetting(v, s, words),
  schema: { type: 'boolean' },
});

/** One of `values` (strings from the environment are trimmed). */
export function oneOf<V extends string>(
  values: readonly V[],
  message = `must be one of ${values.join(', ')}`,
): Rule<V> {
  return {
    parse: (v, s) => {
      const t = typeof v === 'string' ? v.trim() : v;
      if (!values.includes(t as V)) throw new ConfigError(s, `${message} (got ${JSON.stringify(v)})`);
      return t as V;
    },
    schema: { type: 'string', enum: values },
  };
}

/** A non-empty string, matching `pattern` if given. */
export function text(o: { pattern?: RegExp; message?: string; trim?: boolean } = {}): Rule<string> {
  const message = o.message ?? (o.pattern ? `must match ${o.pattern.source}` : 'must be a non-empty string');
  return {
    parse: (v, s) => {
      const t = typeof v === 'string' && o.trim ? v.trim() : v;
      if (typeof t !== 'string' || t.length === 0 || (o.pattern && !o.pattern.test(t)))
        throw new ConfigError(s, message);
      return t;
    },
    schema: { type: 'string', minLength: 1, ...(o.pattern ? { pattern: o.pattern.source } : {}) },
  };
}

/** An `http(s)://` base URL without credentials, query or fragment; trailing slashes dropped. */
export const httpUrl: Rule<string> = {
  parse(value, setting) {
    if (typeof value !== 'string') throw new ConfigError(setting, 'must be a URL string');
    let u: URL;
    try {
      u = new URL(value);
    } catch {
      throw new ConfigError(setting, `is not a valid URL (got ${JSON.stringify(value)})`);
    }
    if (u.protocol !== 'http:' && u.protocol !== 'https:')
      throw new ConfigError(setting, `must be http or https (got ${u.protocol})`);
    if (u.username || u.password) throw new ConfigError(setting, 'must not carry credentials; use the token setting');
    if (u.search || u.hash) throw new ConfigError(setting, 'must not have a query or fragment');
    return value.replace(/\/+$/, '');
  },
  schema: { type: 'string', pattern: '^https?://' },
};

// ---- Reading ----------------------------------------------------------------------------------

/** Where a group's values come from. */
export interface SettingSource {
  /** The environment (wins); a blank variable counts as unset. Only for whole names: a backend's entry is built from its variables first (`entryFromEnv`). @default none */
  env?: NodeJS.ProcessEnv;
  /** The group's object in the config file (or a backend entry). */
  file: unknown;
  /** The group's file path, for errors: `http`, `backends[0]`; '' at the top level. */
  path: string;
  /** Refuse file keys the group does not declare (a group read on its own; a backend entry also holds the common keys). @default false */
  strict?: boolean;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The group's file object; absent (undefined or null) reads as empty. @throws ConfigError when it is not an object */
export function groupObject(value: unknown, path: string): Record<string, unknown> {
  if (value === undefined || value === null) return {};
  if (!isObject(value)) throw new ConfigError(path, 'must be an object');
  return value;
}

/** One setting's raw value and the name to blame: the variable when set (not blank), else the file key. */
export function pickValue(s: Setting<unknown>, key: string, src: SettingSource): { value: unknown; setting: string } {
  const raw = s.env !== undefined ? src.env?.[s.env] : undefined;
  if (raw !== undefined && raw.trim() !== '') return { value: raw, setting: s.env! };
  const file = s.file ? groupObject(src.file, src.path)[key] : undefined;
  return { value: file, setting: src.path === '' ? key : `${src.path}.${key}` };
}

/** One setting: its variable, else its file key, else its default. @throws ConfigError naming the one given */
export function readSetting<T>(s: Setting<T>, key: string, src: SettingSource): T {
  const { value, setting } = pickValue(s, key, src);
  if (value === undefined || value === null) return fresh(s.default);
  return s.rule.parse(value, setting);
}

/** Every setting of a group, nested groups included. @throws ConfigError naming the first bad one */
export function readGroup<G extends SettingsGroup>(group: G, src: SettingSource): SettingValues<G> {
  const file = groupObject(src.file, src.path);
  const at = (key: string): string => (src.path === '' ? key : `${src.path}.${key}`);
  if (src.strict) {
    const known = Object.entries(group).flatMap(([k, n]) => (!isSetting(n) || n.file ? [k] : []));
    for (const key of Object.keys(file))
      if (!known.includes(key)) throw new ConfigError(at(key), `is not a known key (known: ${known.join(', ')})`);
  }
  const out: Record<string, unknown> = {};
  for (const [key, node] of Object.entries(group)) {
    out[key] = isSetting(node)
      ? readSetting(node, key, { ...src, file })
      : readGroup(node, { ...src, file: file[key], path: at(key) });
  }
  return out as SettingValues<G>;
}

/** A group's environment variables (`env` as declared) with the dotted file path each sets. */
export function envPaths(group: SettingsGroup): Record<string, string> {
  return Object.fromEntries(
    settingLeaves(group).flatMap(({ path, setting: s }) => (s.env === undefined ? [] : [[s.env, path]])),
  );
}

/**
 * A group's values as its variables give them, nested at their file paths (what a file entry
 * would hold): `get(env)` is the variable as set, undefined when unset.
 */
export function entryFromEnv(group: SettingsGroup, get: (env: string) => string | undefined): Record<string, unknown> {
  const entry: Record<string, unknown> = {};
  for (const [name, path] of Object.entries(envPaths(group))) {
    const value = get(name);
    if (value === undefined) continue;
    const keys = path.split('.');
    let at = entry;
    for (const k of keys.slice(0, -1)) at = (at[k] ??= {}) as Record<string, unknown>;
    at[keys[keys.length - 1]!] = value;
  }
  return entry;
}

/**
 * The name to blame for a setting deep in a group (`trustedDocuments.path`): its variable when
 * set, else its file key. For checks across settings, made after the group is read.
 */
export function settingName(group: SettingsGroup, dotted: string, src: SettingSource): string {
  const keys = dotted.split('.');
  let node: Setting<unknown> | SettingsGroup = group;
  let file = src.file;
  let path = src.path;
  for (const key of keys.slice(0, -1)) {
    node = (node as SettingsGroup)[key]!;
    file = groupObject(file, path)[key];
    path = path === '' ? key : `${path}.${key}`;
  }
  const last = keys[keys.length - 1]!;
  return pickValue((node as SettingsGroup)[last] as Setting<unknown>, last, { ...src, file, path }).setting;
}
