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
  const md = readFileSync(out, 'utf8');
  const rows = md.split('\n').filter((l) => /^\| (volume|volumes|OpenStack)/.test(l));
  // Nomad volume(id), Nomad volumes(first: 100), OpenStack volumes(first: 100), each at 1 and 50 connections.
  expect(rows).toHaveLength(6);
  // The OpenStack batch-strategy table: one row per batch size, each naming the faster strategy twice.
  const strategy = md.split('\n').filter((l) => /^\| \d+ \|/.test(l));
  expect(strategy.map((l) => l.split('|')[1]!.trim())).toEqual(['1', '2', '4', '8', '16', '32']);
  for (const row of strategy) expect(row.match(/\| (shows|list) \|/g)).toHaveLength(2);
  for (const row of rows) {
    const cells = row.split('|').map((c) => c.trim());
    expect(cells.at(-2)).toBe('0'); // errors
    expect(cells.at(-3)).toMatch(/^\d+ \/ \d+$/); // backend calls
  }
}, 180_000);
