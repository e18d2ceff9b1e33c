/**
 * The load generator as its own process, so it can be pinned to a CPU (bench/pinned-load.ts, which
 * starts it with an IPC channel and keeps it for every run on that CPU): each message is one
 * {@link LoadJob}, run with undici at `connections`, answered `{ result }` ({@link LoadResult}) or
 * `{ error }`. Every answer is checked (status 200, and no `errors` member for GraphQL), so a
 * failing endpoint counts errors instead of looking fast. It exits when its parent goes.
 */
import { Pool } from 'undici';
import { runLoad, type LoadResult } from './load';
import type { LoadJob } from './pinned-load';

async function run(job: LoadJob): Promise<LoadResult> {
  const url = new URL(job.url);
  const pool = new Pool(url.origin, { connections: job.connections, pipelining: 1 });
  const bodies = job.bodies ?? [job.body];
  let n = 0;
  const one = async (): Promise<void> => {
    const body = bodies[n++ % bodies.length];
    const res = await pool.request({
      method: job.method ?? (body ? 'POST' : 'GET'),
      path: url.pathname + url.search,
      headers: job.headers,
      body,
    });
    const text = await res.body.text();
    if (res.statusCode !== 200) throw new Error(`HTTP ${res.statusCode}`);
    if (job.graphql && text.includes('"errors"')) throw new Error(text.slice(0, 200));
  };
  try {
    return await runLoad(one, { connections: job.connections, requests: job.requests, warmup: job.warmup });
  } finally {
    await pool.close();
  }
}

process.on('message', (job: LoadJob) => {
  run(job).then(
    (result) => process.send!({ result }),
    (err: unknown) => process.send!({ error: (err as Error).stack ?? String(err) }),
  );
});
process.on('disconnect', () => process.exit(0));
