/**
 * Load from a process of its own, pinned to one CPU with `taskset` when asked, so the gateway,
 * the backend and the load generator do not share a core by accident. The generator is
 * bench/load.ts (closed loop, undici, latencies in fractions of a millisecond).
 */
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import type { LoadResult } from './load';
import { pinned, root } from './processes';

/** One load run, as bench/load-child.ts reads it. */
export interface LoadJob {
  /** Full URL of the endpoint. */
  url: string;
  /** @default POST when there is a body, else GET */
  method?: string;
  headers?: Record<string, string>;
  /** Request body (a GraphQL request's JSON). @default none */
  body?: string;
  /** Bodies sent in turn instead of one `body`. @default none */
  bodies?: string[];
  /** Count an answer with an `errors` member as an error. @default false */
  graphql?: boolean;
  connections: number;
  /** Counted requests in total. */
  requests: number;
  /** Uncounted requests per connection first. */
  warmup: number;
}

/** Runs `job` in bench/load-child.ts on CPUs `cpus` (e.g. "1"; none: unpinned). */
export function pinnedLoad(job: LoadJob, cpus?: string): Promise<LoadResult> {
  const [cmd, args] = pinned(cpus, ['--import', 'tsx', join(root, 'bench/load-child.ts'), JSON.stringify(job)]);
  return new Promise((ok, fail) => {
    execFile(cmd, args, { cwd: root, maxBuffer: 1 << 20 }, (err, stdout, stderr) => {
      if (err) return fail(new Error(`load generator failed: ${stderr || err.message}`));
      ok(JSON.parse(stdout.trim().split('\n').pop()!) as LoadResult);
    });
  });
}
