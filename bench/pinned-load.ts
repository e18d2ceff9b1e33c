/**
 * Load from a process of its own, pinned to one CPU with `taskset` when asked, so the gateway,
 * the backend and the load generator do not share a core by accident. The generator is
 * bench/load.ts (closed loop, undici, latencies in fractions of a millisecond) in
 * bench/load-child.ts: one process per CPU set, started at its first run and kept for the next
 * ones (a start costs about half a second; a benchmark makes dozens of runs).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import type { LoadResult } from './load';
import { pinned, root, started } from './processes';

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

/** A generator process and the end of its queue of runs (one at a time). */
interface Generator {
  child: ChildProcess;
  queue: Promise<unknown>;
}

const generators = new Map<string, Generator>();

function generatorOn(cpus: string | undefined): Generator {
  const key = cpus ?? '';
  const known = generators.get(key);
  if (known && known.child.connected) return known;
  const [cmd, args] = pinned(cpus, ['--import', 'tsx', join(root, 'bench/load-child.ts')]);
  const child = spawn(cmd, args, { cwd: root, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  started.push(child);
  idle(child);
  const g = { child, queue: Promise.resolve() };
  generators.set(key, g);
  return g;
}

/** Between runs the generator does not keep the benchmark alive; it exits when the benchmark does. */
function idle(child: ChildProcess): void {
  child.unref();
  child.channel?.unref();
}

function ask(child: ChildProcess, job: LoadJob): Promise<LoadResult> {
  return new Promise((ok, fail) => {
    child.ref();
    child.channel?.ref();
    const done = (): void => {
      child.off('message', onMessage);
      child.off('exit', onExit);
      idle(child);
    };
    const onMessage = (m: { result?: LoadResult; error?: string }): void => {
      done();
      if (m.result) ok(m.result);
      else fail(new Error(`load generator failed: ${m.error}`));
    };
    const onExit = (code: number | null, signal: string | null): void => {
      done();
      fail(new Error(`load generator exited (${code ?? signal})`));
    };
    child.on('message', onMessage);
    child.once('exit', onExit);
    child.send(job);
  });
}

/** Runs `job` in the load generator on CPUs `cpus` (e.g. "1"; none: unpinned), after any run already queued there. */
export function pinnedLoad(job: LoadJob, cpus?: string): Promise<LoadResult> {
  const g = generatorOn(cpus);
  const run = g.queue.then(() => ask(g.child, job));
  g.queue = run.catch(() => undefined);
  return run;
}
