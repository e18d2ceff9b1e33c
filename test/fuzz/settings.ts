/**
 * Fuzz settings: two modes (short inside `npm test`, long for `npm run fuzz`) and the
 * environment variables that change them. Documented in docs/reliability.md ("Fuzzing").
 */
import type { ClientLimits } from './http-client';
import type { HostileLimits } from './hostile-documents';
import type { FindingKind } from './oracle';
import type { DocumentLimits } from './schema-arbitraries';

/** The properties, each run against a fresh gateway and simulators. */
export const PROPERTIES = ['documents', 'hostile-documents', 'arguments', 'headers', 'raw'] as const;
export type PropertyName = (typeof PROPERTIES)[number];

export interface FuzzSettings {
  mode: 'short' | 'long';
  /** fast-check seed; random unless `FUZZ_SEED` is set. Printed with every report. */
  seed: number;
  /** fast-check replay path (`FUZZ_PATH`, from a failure report; needs `FUZZ_SEED`). */
  path?: string;
  /** Runs per property (one HTTP request each, plus shrinking). */
  runs: Record<PropertyName, number>;
  /** Properties to run (`FUZZ_ONLY=arguments,headers`). @default all */
  only: PropertyName[];
  /** Finding kinds not counted as failures (`FUZZ_IGNORE=internal-error,off-route`), to look past known bugs. @default none */
  ignore: Set<FindingKind>;
  /** Wall-clock budget of one property, shrinking included (`FUZZ_TIME_LIMIT_MS`). */
  timeLimitMs: number;
  client: ClientLimits;
  documents: DocumentLimits;
  hostile: HostileLimits;
  /** RSS bound: the lower of this and baseline + {@link rssHeadroomBytes}. @default 1.5 GB */
  rssCeilingBytes: number;
  /** @default 600 MB */
  rssHeadroomBytes: number;
}

const SHORT_RUNS: Record<PropertyName, number> = {
  documents: 800,
  'hostile-documents': 700,
  arguments: 600,
  headers: 300,
  raw: 300,
};

function int(env: NodeJS.ProcessEnv, name: string, fallback: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isSafeInteger(n)) throw new Error(`${name} must be an integer, got ${JSON.stringify(raw)}`);
  return n;
}

export function fuzzSettings(mode: 'short' | 'long', env: NodeJS.ProcessEnv = process.env): FuzzSettings {
  const long = mode === 'long';
  // FUZZ_RUNS is the total over all properties, spread in the short mode's proportions.
  const total = int(env, 'FUZZ_RUNS', long ? 50_000 : 2_700);
  const shortTotal = Object.values(SHORT_RUNS).reduce((a, b) => a + b, 0);
  const runs = Object.fromEntries(
    Object.entries(SHORT_RUNS).map(([k, n]) => [k, Math.max(1, Math.round((n * total) / shortTotal))]),
  ) as Record<PropertyName, number>;
  const only = (env.FUZZ_ONLY ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  for (const o of only)
    if (!(PROPERTIES as readonly string[]).includes(o))
      throw new Error(`FUZZ_ONLY: unknown property ${JSON.stringify(o)} (known: ${PROPERTIES.join(', ')})`);
  return {
    mode,
    seed: int(env, 'FUZZ_SEED', Math.floor(Math.random() * 2 ** 31)),
    path: env.FUZZ_PATH || undefined,
    runs,
    only: only.length ? (only as PropertyName[]) : [...PROPERTIES],
    ignore: new Set(
      (env.FUZZ_IGNORE ?? '')
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean) as FindingKind[],
    ),
    timeLimitMs: int(env, 'FUZZ_TIME_LIMIT_MS', long ? 30 * 60_000 : 15_000),
    client: { timeoutMs: int(env, 'FUZZ_REQUEST_TIMEOUT_MS', 20_000), maxResponseBytes: 20 * 1024 * 1024 },
    documents: long ? { maxDepth: 6, maxFields: 6 } : { maxDepth: 4, maxFields: 4 },
    hostile: long
      ? {
          maxChain: 26,
          maxAliases: 1_200,
          maxDirectives: 200,
          maxTokens: 20_000,
          maxFragments: 20,
          maxRepresentations: 20_000,
        }
      : {
          maxChain: 16,
          maxAliases: 40,
          maxDirectives: 60,
          maxTokens: 2_000,
          maxFragments: 12,
          maxRepresentations: 2_000,
        },
    rssCeilingBytes: 1.5 * 1024 ** 3,
    rssHeadroomBytes: 600 * 1024 ** 2,
  };
}
