/** A closed-loop load generator: `connections` workers each run `fn` back to back until the budget is spent. */

export interface LoadResult {
  requests: number;
  errors: number;
  durationMs: number;
  /** Requests per second. */
  throughput: number;
  p50: number;
  p99: number;
  mean: number;
}

export interface LoadOptions {
  connections: number;
  /** Stop after this many requests in total. */
  requests: number;
  /** Requests per worker run first and not counted (JIT, connection set-up). */
  warmup: number;
}

/** The middle value (the mean of the two middle ones for an even count). */
export function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

export async function runLoad(fn: () => Promise<void>, o: LoadOptions): Promise<LoadResult> {
  await Promise.all(
    Array.from({ length: o.connections }, async () => {
      for (let i = 0; i < o.warmup; i++) await fn();
    }),
  );
  const latencies: number[] = [];
  let errors = 0;
  let issued = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: o.connections }, async () => {
      while (issued < o.requests) {
        issued++;
        const t = performance.now();
        try {
          await fn();
          latencies.push(performance.now() - t);
        } catch {
          errors++;
        }
      }
    }),
  );
  const durationMs = performance.now() - started;
  latencies.sort((a, b) => a - b);
  const sum = latencies.reduce((a, b) => a + b, 0);
  return {
    requests: latencies.length,
    errors,
    durationMs,
    throughput: (latencies.length / durationMs) * 1000,
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
    mean: sum / Math.max(1, latencies.length),
  };
}
