/** A backend probe's timing and answer, one way for every backend. */
import type { BackendHealth } from './model';

/** What a probe found: UP or DOWN, with a message for humans. */
export interface ProbeResult {
  up: boolean;
  message: string | null;
}

/**
 * Runs a probe and times it. A probe that throws is DOWN with its message and no latency (no
 * answer came); `health()` never throws.
 */
export async function timedProbe(run: () => Promise<ProbeResult>): Promise<BackendHealth> {
  const started = performance.now();
  const checkedAt = new Date().toISOString();
  try {
    const r = await run();
    const latencyMs = Math.round((performance.now() - started) * 100) / 100;
    return { status: r.up ? 'UP' : 'DOWN', latencyMs, message: r.message, checkedAt };
  } catch (err) {
    return { status: 'DOWN', latencyMs: null, message: err instanceof Error ? err.message : String(err), checkedAt };
  }
}
