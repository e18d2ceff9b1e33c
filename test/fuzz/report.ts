/**
 * Turning a fast-check run into a report a developer can act on: the findings, the shrunk
 * counterexample as the HTTP request that was sent, and the command that replays it.
 */
import type fc from 'fast-check';
import type { RawRequest } from './http-client';
import type { Finding, FindingKind } from './oracle';
import type { FuzzCase } from './requests';

/** Thrown by a property run with findings; fast-check shrinks the case that threw it. */
export class FindingsError extends Error {
  constructor(readonly findings: Finding[]) {
    super(findings.map((f) => `${f.kind}: ${f.detail}`).join('\n'));
  }
}

/** Counters of one property run (shrink runs included). */
export interface Stats {
  requests: number;
  statuses: Record<string, number>;
  codes: Record<string, number>;
  backendCalls: number;
  slowestMs: number;
  /** The slowest request, abridged (where the time goes). */
  slowest: string;
  /** Time per case label, in ms. */
  msByLabel: Record<string, number>;
  maxRssMb: number;
}

export const newStats = (): Stats => ({
  requests: 0,
  statuses: {},
  codes: {},
  backendCalls: 0,
  slowestMs: 0,
  slowest: '',
  msByLabel: {},
  maxRssMb: 0,
});

export interface PropertyReport {
  property: string;
  seed: number;
  ok: boolean;
  /** Runs that passed before the failure (or all of them). */
  runs: number;
  interrupted: boolean;
  /** Finding kinds of the shrunk counterexample. */
  kinds: FindingKind[];
  stats: Stats;
  /** Human-readable: findings, shrunk request, replay command. */
  text: string;
}

const MAX_SHOWN = 4_000;

const clip = (s: string, n = MAX_SHOWN): string => (s.length > n ? `${s.slice(0, n)}… (${s.length} chars)` : s);

/** The request as it went on the wire; header values JSON-quoted so control characters show. */
export function showRequest(r: RawRequest): string {
  const lines = [`${r.method} ${clip(r.target, 2_000)}`];
  for (const [k, v] of r.headers) lines.push(`${k}: ${JSON.stringify(clip(v, 300))}`);
  if (r.body !== undefined) lines.push(`(body: ${Buffer.byteLength(r.body)} bytes)`, clip(r.body));
  return lines.join('\n');
}

export function summarize(
  property: string,
  details: fc.RunDetails<[FuzzCase]>,
  stats: Stats,
  replay: string,
): PropertyReport {
  const base = { property, seed: details.seed, runs: details.numRuns, interrupted: details.interrupted, stats };
  const statLine = `${stats.requests} requests, ${stats.backendCalls} backend calls, statuses ${JSON.stringify(stats.statuses)}, codes ${JSON.stringify(stats.codes)}, ms by kind ${JSON.stringify(stats.msByLabel)}, max RSS ${stats.maxRssMb} MB, slowest ${stats.slowestMs} ms: ${stats.slowest}`;
  if (!details.failed) {
    return {
      ...base,
      ok: true,
      kinds: [],
      text: `fuzz "${property}": ${details.numRuns} runs passed${details.interrupted ? ' (interrupted by the time limit)' : ''} (seed ${details.seed}); ${statLine}`,
    };
  }
  const err = details.errorInstance;
  const findings =
    err instanceof FindingsError
      ? err.findings
      : [{ kind: 'crash' as const, detail: `the property itself threw: ${String(err)}` }];
  const c = details.counterexample?.[0];
  const text = [
    `fuzz "${property}" failed after ${details.numRuns} runs, shrunk ${details.numShrinks} times (seed ${details.seed}, path ${details.counterexamplePath})${details.interrupted ? ' — interrupted by the time limit while shrinking' : ''}`,
    'findings:',
    ...findings.map((f) => `  - ${f.kind}: ${clip(f.detail, 1_500)}`),
    `counterexample (${c?.label ?? '?'}):`,
    c ? showRequest(c.request).replace(/^/gm, '    ') : '    (none)',
    `replay: ${replay.replace('<SEED>', String(details.seed)).replace('<PATH>', details.counterexamplePath ?? '')}`,
    statLine,
  ].join('\n');
  return { ...base, ok: false, kinds: [...new Set(findings.map((f) => f.kind))], text };
}
