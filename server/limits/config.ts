/**
 * The `limits` settings group: operation limits checked before and during execution. Read from
 * the environment (wins) and the config file's `limits` object, validated like server/config.ts.
 * docs/configuration.md ("Operation limits") lists the same settings.
 */
import { booleanSetting, ConfigError, numberSetting } from '../config-values';

/** Limits applied to every operation the gateway executes. */
export interface LimitsConfig {
  /** Most nested field levels (fragments add none; introspection is exempt). @default 6 (env `MAX_DEPTH`) */
  maxDepth: number;
  /** Most aliased fields per operation (`__typename` aliases are free). @default 15 (env `MAX_ALIASES`) */
  maxAliases: number;
  /** Most directives per operation. @default 50 (env `MAX_DIRECTIVES`) */
  maxDirectives: number;
  /** Most lexical tokens per document; parsing stops at the first one over. @default 1000 (env `MAX_TOKENS`) */
  maxTokens: number;
  /** Highest estimated cost (`@cost`/`@listSize` in the schema, docs/limits.md). @default 5000 (env `MAX_COST`) */
  maxCost: number;
  /** Largest answer, estimated while executing (JSON bytes of the data). @default 10485760 (env `MAX_RESPONSE_BYTES`) */
  maxResponseBytes: number;
  /** Most HTTP calls one operation may send to each backend (retries count). @default 200 (env `MAX_BACKEND_CALLS_PER_OPERATION`) */
  maxBackendCallsPerOperation: number;
  /** Deadline of a whole operation in milliseconds. @default 30000 (env `OPERATION_TIMEOUT_MS`) */
  operationTimeoutMs: number;
  /**
   * Whether `__schema` and `__type` are answered.
   * @default true in demo mode and when NODE_ENV is not `production`, else false (env `INTROSPECTION`)
   */
  introspection: boolean;
  /** Most introspection root fields (`__schema`, `__type`) per operation. @default 3 (env `MAX_INTROSPECTION_FIELDS`) */
  maxIntrospectionFields: number;
  /** Most nested levels inside one introspection field (the standard query needs 15). @default 20 (env `MAX_INTROSPECTION_DEPTH`) */
  maxIntrospectionDepth: number;
}

/** Defaults, as documented; `introspection` here is the non-production default. */
export const DEFAULT_LIMITS: Readonly<LimitsConfig> = Object.freeze({
  maxDepth: 6,
  maxAliases: 15,
  maxDirectives: 50,
  maxTokens: 1000,
  maxCost: 5000,
  maxResponseBytes: 10 * 1_048_576,
  maxBackendCallsPerOperation: 200,
  operationTimeoutMs: 30_000,
  introspection: true,
  maxIntrospectionFields: 3,
  maxIntrospectionDepth: 20,
});

/** Each numeric setting: env name, file key, bounds. */
const NUMBERS: ReadonlyArray<[keyof LimitsConfig, string, number, number]> = [
  ['maxDepth', 'MAX_DEPTH', 1, 100],
  ['maxAliases', 'MAX_ALIASES', 0, 10_000],
  ['maxDirectives', 'MAX_DIRECTIVES', 0, 10_000],
  ['maxTokens', 'MAX_TOKENS', 10, 1_000_000],
  ['maxCost', 'MAX_COST', 1, 1_000_000_000],
  ['maxResponseBytes', 'MAX_RESPONSE_BYTES', 1024, 1024 * 1_048_576],
  ['maxBackendCallsPerOperation', 'MAX_BACKEND_CALLS_PER_OPERATION', 1, 1_000_000],
  ['operationTimeoutMs', 'OPERATION_TIMEOUT_MS', 10, 3_600_000],
  ['maxIntrospectionFields', 'MAX_INTROSPECTION_FIELDS', 1, 1000],
  ['maxIntrospectionDepth', 'MAX_INTROSPECTION_DEPTH', 1, 1000],
];


/**
 * The `limits` group from the environment and the file's `limits` object.
 * @param demo demo mode (no backend configured): introspection defaults to on, for GraphiQL.
 * @throws ConfigError naming the env variable or file key.
 */
export function limitsConfig(env: NodeJS.ProcessEnv, file: Record<string, unknown>, o: { demo: boolean }): LimitsConfig {
  const raw = file.limits;
  if (raw !== undefined && raw !== null && (typeof raw !== 'object' || Array.isArray(raw))) throw new ConfigError('limits', 'must be an object like { "maxDepth": 6 }');
  const f = (raw ?? {}) as Record<string, unknown>;
  const known = new Set<string>([...NUMBERS.map(([k]) => k), 'introspection']);
  for (const k of Object.keys(f)) if (!known.has(k)) throw new ConfigError(`limits.${k}`, `is not a known limit (known: ${[...known].join(', ')})`);
  const out: LimitsConfig = { ...DEFAULT_LIMITS };
  for (const [key, envName, min, max] of NUMBERS) {
    const fromEnv = env[envName]?.trim() ? env[envName] : undefined;
    const value = fromEnv ?? f[key];
    if (value !== undefined) (out[key] as number) = numberSetting(value, fromEnv !== undefined ? envName : `limits.${key}`, min, max);
  }
  const envIntro = env.INTROSPECTION?.trim() ? env.INTROSPECTION : undefined;
  if (envIntro !== undefined) out.introspection = booleanSetting(envIntro, 'INTROSPECTION');
  else if (f.introspection !== undefined) out.introspection = booleanSetting(f.introspection, 'limits.introspection');
  // Apollo's convention: no introspection in production, except for the demo (GraphiQL needs it).
  else out.introspection = o.demo || env.NODE_ENV !== 'production';
  return out;
}
