/**
 * The load generator as its own process, so it can be pinned to a CPU (bench/pinned-load.ts):
 * reads one {@link LoadJob} as JSON from argv[2], runs it with undici at `connections`, and prints
 * one JSON line with the {@link LoadResult}. Every answer is checked (status 200, and no `errors`
 * member for GraphQL), so a failing endpoint counts errors instead of looking fast.
 */
import { Pool } from 'undici';
import { runLoad } from './load';
import type { LoadJob } from './pinned-load';

async function main(): Promise<void> {
  const job = JSON.parse(process.argv[2]!) as LoadJob;
  const url = new URL(job.url);
  const pool = new Pool(url.origin, { connections: job.connections, pipelining: 1 });
  const bodies = job.bodies ?? [job.body];
  let n = 0;
  const one = async (): Promise<void> => {
    const body = bodies[n++ % bodies.length];
    const res = await pool.request({ method: job.method ?? (body ? 'POST' : 'GET'), path: url.pathname + url.search, headers: job.headers, body });
    const text = await res.body.text();
    if (res.statusCode !== 200) throw new Error(`HTTP ${res.statusCode}`);
    if (job.graphql && text.includes('"errors"')) throw new Error(text.slice(0, 200));
  };
  const r = await runLoad(one, { connections: job.connections, requests: job.requests, warmup: job.warmup });
  process.stdout.write(`${JSON.stringify(r)}\n`);
  await pool.close();
}

main().catch((e) => {
  process.stderr.write(`${(e as Error).stack}\n`);
  process.exit(1);
});
