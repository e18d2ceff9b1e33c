/**
 * The `limits` settings group: operation limits checked before and during execution. Declared
 * once in {@link LIMITS_SETTINGS} (env `MAX_DEPTH` …, file `limits`); docs/configuration.md
 * ("Operation limits") lists them.
 */
import {
  boolean,
  defaultsOf,
  integer,
  pickValue,
  readGroup,
  setting,
  type SettingValues,
} from '../../adapters/contract/settings';

/** The `limits` group. */
export const LIMITS_SETTINGS = {
  maxDepth: setting({
    env: 'MAX_DEPTH',
    rule: integer(1, 100),
    default: 6,
    doc: 'Most nested field levels (fragments add none; introspection is exempt).',
  }),
  maxAliases: setting({
    env: 'MAX_ALIASES',
    rule: integer(0, 10_000),
    default: 15,
    doc: 'Most aliased fields per operation (`__typename` aliases are free).',
  }),
  maxDirectives: setting({
    env: 'MAX_DIRECTIVES',
    rule: integer(0, 10_000),
    default: 50,
    doc: 'Most directives per operation.',
  }),
  maxTokens: setting({
    env: 'MAX_TOKENS',
    rule: integer(10, 1_000_000),
    default: 1000,
    doc: 'Most lexical tokens per document; parsing stops at the first one over.',
  }),
  maxCost: setting({
    env: 'MAX_COST',
    rule: integer(1, 1_000_000_000),
    default: 5000,
    doc: 'Highest estimated cost (`@cost`/`@listSize` in the schema, docs/limits.md).',
  }),
  maxResponseBytes: setting({
    env: 'MAX_RESPONSE_BYTES',
    rule: integer(1024, 1024 * 1_048_576),
    default: 10 * 1_048_576,
    doc: 'Largest answer, estimated while executing (JSON bytes of the data).',
  }),
  maxBackendCallsPerOperation: setting({
    env: 'MAX_BACKEND_CALLS_PER_OPERATION',
    rule: integer(1, 1_000_000),
    default: 200,
    doc: 'Most HTTP calls one operation may send to each backend (retries count).',
  }),
  operationTimeoutMs: setting({
    env: 'OPERATION_TIMEOUT_MS',
    rule: integer(10, 3_600_000),
    default: 30_000,
    doc: 'Deadline of a whole operation in milliseconds.',
  }),
  introspection: setting({
    env: 'INTROSPECTION',
    rule: boolean(),
    // The value here is the non-production one; the reader applies the rule below.
    default: true,
    defaultNote: 'true in demo mode and when NODE_ENV is not production, else false',
    doc: 'Whether `__schema` and `__type` are answered.',
  }),
  maxIntrospectionFields: setting({
    env: 'MAX_INTROSPECTION_FIELDS',
    rule: integer(1, 1000),
    default: 3,
    doc: 'Most introspection root fields (`__schema`, `__type`) per operation.',
  }),
  maxIntrospectionDepth: setting({
    env: 'MAX_INTROSPECTION_DEPTH',
    rule: integer(1, 1000),
    default: 20,
    doc: 'Most nested levels inside one introspection field (the standard query needs 15).',
  }),
} as const;

/** Limits applied to every operation the gateway executes; each key's meaning and default are in {@link LIMITS_SETTINGS}. */
export type LimitsConfig = SettingValues<typeof LIMITS_SETTINGS>;

/** Defaults, as documented; `introspection` here is the non-production default. */
export const DEFAULT_LIMITS: Readonly<LimitsConfig> = Object.freeze(defaultsOf(LIMITS_SETTINGS));

/**
 * The `limits` group from the environment and the file's `limits` object.
 * @param demo demo mode (no backend configured): introspection defaults to on, for GraphiQL.
 * @throws ConfigError naming the env variable or file key.
 */
export function limitsConfig(
  env: NodeJS.ProcessEnv,
  file: Record<string, unknown>,
  o: { demo: boolean },
): LimitsConfig {
  const src = { env, file: file.limits, path: 'limits', strict: true };
  const out = readGroup(LIMITS_SETTINGS, src);
  // Apollo's convention: no introspection in production, except for the demo (GraphiQL needs it).
  const given = pickValue(LIMITS_SETTINGS.introspection, 'introspection', src).value;
  return given === undefined || given === null
    ? { ...out, introspection: o.demo || env.NODE_ENV !== 'production' }
    : out;
}
