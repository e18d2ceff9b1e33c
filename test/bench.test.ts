/** The benchmark's short mode: it runs end to end and writes figures. No timing is asserted. */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

it('should run the benchmark in short mode and write one row per scenario and connection count, without errors', () => {
  const out = join(mkdtempSync(join(tmpdir(), 'bench-')), 'RESULTS.md');
  const run = spawnSync(process.execPath, ['--import', 'tsx', 'bench/run.ts'], {
    cwd: join(__dirname, '..'),
    env: { ...process.env, BENCH_SHORT: '1', BENCH_OUT: out },
    encoding: 'utf8',
    timeout: 170_000,
  });
  expect(run.stderr).not.toMatch(/Error/);
  expect(run.status).toBe(0);
  const rows = readFileSync(out, 'utf8').split('\n').filter((l) => /^\| (volume|volumes)/.test(l));
  expect(rows).toHaveLength(4);
  for (const row of rows) {
    const cells = row.split('|').map((c) => c.trim());
    expect(cells.at(-2)).toBe('0'); // errors
    expect(cells.at(-3)).toMatch(/^\d+ \/ \d+$/); // backend calls
  }
}, 180_000);
