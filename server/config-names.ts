/**
 * The list of every setting the gateway reads, by environment variable and config-file path, and
 * the start-up check that refuses a name it does not know (issue 17, item 11): a typo such
 * as `GATEWAY_BACKEND=` (for `GATEWAY_BACKENDS`) or `{"prot": 4630}` must stop the gateway, not
 * start it with defaults or in demo mode. docs/configuration.md ("Unknown settings") describes it.
 *
 * The names come from the config definition (server/config-definition.ts): adding a setting there
 * makes it known here.
 */
import { settingLeaves, ConfigError } from '../adapters/contract/settings';
import { BACKEND_MODULES } from './kinds';
import { BACKEND_ENV_PREFIX, BACKENDS_SETTING, backendSettings, GATEWAY_SETTINGS } from './config-definition';
import { editDistance, isServiceLink, nearMissOf, PLATFORM_ENV_PREFIXES, settingShaped } from './config-near-names';

/**
 * Every setting: `[environment variable, config-file path]`; either may be null. File paths use
 * `.` for nesting and `[]` for a list's items; `<ID>` in a variable stands for a backend id of
 * `GATEWAY_BACKENDS` (upper-cased, `-` → `_`). Derived from the config definition
 * (server/config-definition.ts) and the backend modules' settings.
 */
export const SETTINGS: ReadonlyArray<readonly [env: string | null, file: string | null]> = [
  ...settingLeaves(GATEWAY_SETTINGS).map(
    ({ path, setting }) => [setting.env ?? null, setting.file ? path : null] as const,
  ),
  [BACKENDS_SETTING.env!, 'backends'],
  // A backend key is known for every backend whatever its kind: the check is about spelling, the
  // kind's parser about meaning.
  ...uniqueBy(
    BACKEND_MODULES.flatMap((m) => settingLeaves(backendSettings(m))),
    ({ path }) => path,
  ).map(
    ({ path, setting }) =>
      [
        setting.env === undefined ? null : `${BACKEND_ENV_PREFIX}${setting.env}`,
        setting.file ? `backends[].${path}` : null,
      ] as const,
  ),
];

/** The first item of each key, in order. */
function uniqueBy<T>(items: T[], key: (t: T) => string): T[] {
  const seen = new Set<string>();
  return items.filter((t) => !seen.has(key(t)) && seen.add(key(t)));
}

/**
 * Prefixes the gateway owns: an environment variable under one that is not in {@link SETTINGS}
 * stops start-up. Exact names such as `PORT` and `HOST` are deliberately not here (`HOSTNAME`
 * is set by every container); a name without `_` at its end (`TRUSTED_DOCUMENTS`) also covers
 * its misspelled longer forms. Outside them only slips of a setting's name stop it
 * (server/config-near-names.ts).
 */
export const OWNED_ENV_PREFIXES: readonly string[] = [
  'GATEWAY_',
  'WS_',
  'LIVE_',
  'RATE_LIMIT_',
  'CORS_',
  'MAX_',
  'REDIS_',
  'TRUSTED_DOCUMENTS',
  'DEMO_',
  'SHUTDOWN_',
  'TRUST_PROXY',
  'INTROSPECTION',
  'OPERATION_TIMEOUT',
  'HEADERS_TIMEOUT',
  'REQUEST_TIMEOUT',
  'LOG_LEVEL',
  'BREAKER_',
  'READINESS_',
  'TLS_',
  'MANAGEMENT_PORT',
  'SCHEMA_SDL',
];

/** Set in bulk by platforms and the backends' own tools (a module's `nativeEnv`: openrc files, Nomad's task environment): never checked. */
const NEVER_CHECKED_PREFIXES: readonly string[] = [
  ...BACKEND_MODULES.flatMap((m) => (m.nativeEnv ? [m.nativeEnv.prefix] : [])),
  ...PLATFORM_ENV_PREFIXES,
];

const BACKEND_ID = '<ID>';

/** A backend id as its variables spell it. */
export const envId = (id: string): string => id.toUpperCase().replace(/-/g, '_');

/** The candidate closest to `name` by edit distance (case ignored); the first one on a tie. */
export function closestName(name: string, candidates: Iterable<string>): string | undefined {
  let best: string | undefined;
  let bestD = Infinity;
  for (const c of candidates) {
    const d = editDistance(name.toLowerCase(), c.toLowerCase());
    if (d < bestD) [best, bestD] = [c, d];
  }
  return best;
}

/** The ids `GATEWAY_BACKENDS` names, as its variables spell them (the list itself is validated later). */
function configuredEnvIds(env: NodeJS.ProcessEnv): string[] {
  const list = env.GATEWAY_BACKENDS?.trim();
  if (!list) return [];
  return list.split(',').flatMap((entry) => {
    const id = /^\s*([^=\s]+)\s*=/.exec(entry)?.[1];
    return id ? [envId(id)] : [];
  });
}

/**
 * Unknown variables, each with the closest known name: every one under the owned prefixes, and
 * elsewhere those that read as a slip of a setting's variable (server/config-near-names.ts).
 */
export function unknownEnvNames(env: NodeJS.ProcessEnv): Array<{ name: string; closest?: string; note?: string }> {
  const ids = configuredEnvIds(env);
  const exact = new Set<string>();
  const perBackend: string[] = [];
  for (const [name] of SETTINGS) {
    if (name === null) continue;
    if (name.includes(BACKEND_ID)) perBackend.push(name);
    else exact.add(name);
  }
  const known = new Set([...exact, ...ids.flatMap((id) => perBackend.map((n) => n.replace(BACKEND_ID, id)))]);
  const unknown: Array<{ name: string; closest?: string; note?: string }> = [];
  for (const name of Object.keys(env).sort()) {
    if (known.has(name) || NEVER_CHECKED_PREFIXES.some((p) => name.startsWith(p)) || isServiceLink(name, env[name]))
      continue;
    if (!OWNED_ENV_PREFIXES.some((p) => name.startsWith(p))) {
      const slipOf = settingShaped(name) ? nearMissOf(name, exact) : undefined;
      if (slipOf) unknown.push({ name, closest: slipOf, note: 'it reads as a misspelling of that setting' });
      continue;
    }
    const closest = closestName(name, ids.length > 0 ? known : [...exact, ...perBackend]);
    const backendLike =
      /^GATEWAY_BACKEND_/.test(name) &&
      perBackend.some((n) => name.endsWith(n.slice(n.indexOf(BACKEND_ID) + BACKEND_ID.length)));
    const note = backendLike
      ? ids.length > 0
        ? `its backend is not in GATEWAY_BACKENDS (${ids.join(', ')})`
        : 'per-backend variables apply to the backends of GATEWAY_BACKENDS, and it is not set'
      : undefined;
    unknown.push({ name, ...(closest ? { closest } : {}), ...(note ? { note } : {}) });
  }
  return unknown;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Unknown keys of the config file at every level its schema defines, each with the closest known key at that level. */
export function unknownFileKeys(file: Record<string, unknown>): Array<{ name: string; closest?: string }> {
  const leaves = new Set(SETTINGS.flatMap(([, path]) => (path === null ? [] : [path])));
  /** The known keys directly under `schemaPath` ('' = top level), `[]` marking a list of objects. */
  const children = (schemaPath: string): string[] => {
    const start = schemaPath === '' ? '' : `${schemaPath}.`;
    const keys = new Set<string>();
    for (const leaf of leaves) if (leaf.startsWith(start)) keys.add(leaf.slice(start.length).split('.')[0]!);
    return [...keys];
  };
  const unknown: Array<{ name: string; closest?: string }> = [];
  const walk = (obj: Record<string, unknown>, schemaPath: string, shownPath: string): void => {
    const here = children(schemaPath);
    for (const [key, value] of Object.entries(obj)) {
      const shown = shownPath === '' ? key : `${shownPath}.${key}`;
      const path = schemaPath === '' ? key : `${schemaPath}.${key}`;
      if (here.includes(`${key}[]`) && Array.isArray(value)) {
        value.forEach((item, i) => isObject(item) && walk(item, `${path}[]`, `${shown}[${i}]`));
      } else if (here.includes(key)) {
        // A group's object is walked; a leaf's value (or a group of the wrong type) is validated where it is read.
        if (!leaves.has(path) && isObject(value)) walk(value, path, shown);
      } else if (!here.includes(`${key}[]`)) {
        const closest = closestName(
          key,
          here.map((k) => k.replace(/\[\]$/, '')),
        );
        unknown.push({
          name: shown,
          ...(closest ? { closest: shownPath === '' ? closest : `${shownPath}.${closest}` } : {}),
        });
      }
    }
  };
  walk(file, '', '');
  return unknown;
}

/**
 * Refuses unknown names in the environment (under the owned prefixes) and in the config file.
 * @throws ConfigError naming the first unknown name, its message listing each with the closest known one
 */
export function checkSettingNames(env: NodeJS.ProcessEnv, file: Record<string, unknown>, filePath?: string): void {
  const found = [
    ...unknownEnvNames(env).map((u) => ({ ...u, what: 'environment variable' })),
    ...unknownFileKeys(file).map((u) => ({ ...u, what: `key in ${filePath ?? 'the config file'}`, note: undefined })),
  ];
  if (found.length === 0) return;
  const describe = (u: (typeof found)[number]): string =>
    `is not a known ${u.what}${u.closest ? ` (closest known: ${u.closest})` : ''}${u.note ? `; ${u.note}` : ''}`;
  const [first, ...rest] = found as [(typeof found)[number], ...typeof found];
  const also = rest.map((u) => `; also ${u.name} ${describe(u)}`).join('');
  throw new ConfigError(first.name, `${describe(first)}${also}. docs/configuration.md lists every setting`);
}
