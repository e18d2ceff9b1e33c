/** The benchmarks' short modes, run by the suite (test/bench*.test.ts). No timing is asserted. */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** Runs one benchmark script in its short mode into a temporary results file; answers that file's text. */
export function runShort(script: string, env: Record<string, string>): string {
  const out = join(mkdtempSync(join(tmpdir(), 'bench-')), 'RESULTS.md');
  const run = spawnSync(process.execPath, ['--import', 'tsx', script], { cwd: join(__dirname, '..', '..'), env: { ...process.env, ...env, BENCH_OUT: out }, encoding: 'utf8', timeout: 170_000 });
  expect(run.stderr).not.toMatch(/Error/);
  expect(run.status).toBe(0);
  return readFileSync(out, 'utf8');
}

export const tableRows = (md: string): string[][] => md.split('\n').filter((l) => /^\| \d/.test(l)).map((l) => l.split('|').slice(1, -1).map((c) => c.trim()));
