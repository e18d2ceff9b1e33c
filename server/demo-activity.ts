/**
 * Demo activity: in demo mode the simulated backends change by themselves, so a newcomer opening
 * the live status page (or a subscription) sees events at once. One step every `intervalMs`,
 * taking turns over the steps given (the demo parts' own, e.g. a claim/release). Each step
 * goes through the simulator's own API, as a scheduler or a user would. A failed step is
 * reported and the cycle goes on; `stop()` waits for a step in progress.
 */
import { pickValue, readGroup } from '../adapters/contract/settings';
import { DEMO_SETTINGS } from './demo-settings';
import type { DemoActivityStep } from '../simulators/common/demo-backend';

/** Default time between two steps. */
export const DEFAULT_DEMO_ACTIVITY_INTERVAL_MS = DEMO_SETTINGS.activityIntervalMs.default;

export interface DemoActivityOptions {
  /** Time between two steps (each step changes one backend). @default 5000 */
  intervalMs?: number;
  /** Told of each step's outcome (tests, logs). @default nothing */
  onStep?: (name: string, outcome: string) => void;
  /** Told of a failed step; the cycle goes on. @default a console warning, at most one a minute */
  onError?: (name: string, err: unknown) => void;
}

export interface DemoActivity {
  /** Steps run so far, failed ones included. */
  readonly steps: number;
  readonly failures: number;
  stop(): Promise<void>;
}

/**
 * Reads `DEMO_ACTIVITY` (`0` turns it off; unset or `1` on) and `DEMO_ACTIVITY_INTERVAL_MS`.
 * @returns false when off
 */
export function demoActivityFromEnv(env: NodeJS.ProcessEnv): DemoActivityOptions | false {
  const src = { env, file: {}, path: '' };
  const { activity, activityIntervalMs } = readGroup(DEMO_SETTINGS, src);
  if (activity === '0') return false;
  return pickValue(DEMO_SETTINGS.activityIntervalMs, 'activityIntervalMs', src).value === undefined
    ? {}
    : { intervalMs: activityIntervalMs };
}

function throttledWarning(): (name: string, err: unknown) => void {
  let last = 0;
  return (name, err) => {
    if (Date.now() - last < 60_000) return;
    last = Date.now();
    console.warn(`demo activity: ${name} failed: ${err instanceof Error ? err.message : String(err)}`);
  };
}

/** Starts the cycle; the first step runs one interval after the start. */
export function startDemoActivity(steps: DemoActivityStep[], o: DemoActivityOptions = {}): DemoActivity {
  const intervalMs = o.intervalMs ?? DEFAULT_DEMO_ACTIVITY_INTERVAL_MS;
  const onError = o.onError ?? throttledWarning();
  const abort = new AbortController();
  let next = 0;
  let count = 0;
  let failures = 0;
  let running: Promise<void> | undefined;
  let timer: NodeJS.Timeout | undefined;

  const tick = async (): Promise<void> => {
    const step = steps[next++ % steps.length]!;
    count++;
    try {
      const outcome = await step.run(abort.signal);
      if (!abort.signal.aborted) o.onStep?.(step.name, outcome);
    } catch (err) {
      failures++;
      if (!abort.signal.aborted) onError(step.name, err);
    }
  };
  // Chained timeouts, not an interval: a slow step never overlaps the next one.
  const schedule = (): void => {
    if (abort.signal.aborted || steps.length === 0) return;
    timer = setTimeout(() => {
      running = tick().finally(() => {
        running = undefined;
        schedule();
      });
    }, intervalMs);
    // The demo's servers keep the process alive; this timer alone must not.
    timer.unref();
  };
  schedule();

  return {
    get steps() {
      return count;
    },
    get failures() {
      return failures;
    },
    async stop() {
      abort.abort();
      clearTimeout(timer);
      await running;
    },
  };
}
