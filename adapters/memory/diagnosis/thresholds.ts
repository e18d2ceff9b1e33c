/**
 * The memory doctor's thresholds. A memory change always ends `operationDelayMs` after it starts
 * (completion/changes.ts), so anything that lasts several delays is not a change still running: the
 * defaults are {@link DELAYS} delays, never less than {@link FLOOR_MS} (a loaded event loop runs
 * timers late, and a watcher's delta reaches the doctor a moment after the change).
 */

/** How many operation delays a default threshold allows. */
export const DELAYS = 3;
/** The least a default threshold is, ms. */
export const FLOOR_MS = 10_000;

/** When a condition the checks find is a problem. */
export interface MemoryThresholds {
  /**
   * A held transition (`CREATING`, `ATTACHING`, `DETACHING`, `EXTENDING`, `DELETING`) older than
   * this is STUCK_TRANSITION. @default 3 × operationDelayMs, at least 10 s
   */
  stuckTransitionMs: number;
  /**
   * A claim (an attachment held for a workload) whose workload is terminal or gone, this long after,
   * is STUCK_CLAIM: its release is one detach, one delay long. @default 3 × operationDelayMs, at least 10 s
   */
  stuckClaimMs: number;
  /**
   * How long an unhealthy or missing plugin (CLAIM_ON_MISSING_PLUGIN) and a disagreement between a
   * host's record and the volume's (ATTACHMENT_DRIFT) may last before they are problems: a plugin
   * restarting, or an attach seen on one side first. @default 3 × operationDelayMs, at least 10 s
   */
  graceMs: number;
}

/** The default of every threshold for changes that take `operationDelayMs`. */
export const derivedThresholdMs = (operationDelayMs: number): number => Math.max(FLOOR_MS, DELAYS * operationDelayMs);

/** Thresholds as settings give them: any of them, undefined where not set. */
export type GivenThresholds = { [K in keyof MemoryThresholds]?: number | undefined };

/** The thresholds: those given, the others derived from the delay. */
export function memoryThresholds(operationDelayMs: number, given: GivenThresholds = {}): MemoryThresholds {
  const d = derivedThresholdMs(operationDelayMs);
  return {
    stuckTransitionMs: given.stuckTransitionMs ?? d,
    stuckClaimMs: given.stuckClaimMs ?? d,
    graceMs: given.graceMs ?? d,
  };
}
