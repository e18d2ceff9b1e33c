/**
 * The clock a lease's local deadline is measured on. A lease must count as lost no later than Redis
 * drops it, so this clock may run fast but never slow: it advances by whichever moved more since the
 * last reading, the monotonic clock (`performance.now()`, immune to wall-clock steps back) or the
 * wall clock (`Date.now()`, which also counts time the host spent suspended).
 */

/** Milliseconds, non-decreasing; only differences between readings mean anything. */
export type LeaseClock = () => number;

/** A new {@link LeaseClock} (each has its own state; cheap). */
export function leaseClock(): LeaseClock {
  let lastMono = performance.now();
  let lastWall = Date.now();
  let t = 0;
  return () => {
    const mono = performance.now();
    const wall = Date.now();
    t += Math.max(mono - lastMono, wall - lastWall, 0);
    lastMono = mono;
    lastWall = wall;
    return t;
  };
}
