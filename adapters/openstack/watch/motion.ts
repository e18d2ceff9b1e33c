/**
 * How long a transition keeps the OpenStack watcher fast (docs/openstack.md, "When it polls"). A
 * volume in motion counts as a reason to poll fast only for `windowMs` after its current
 * transition was first seen (per volume and motion, `motionOf`); one that stays in it (a tenant's
 * `os-reserve` leaves a volume `attaching` until someone unreserves it) then waits for the slow
 * interval like everything else, and a new transition of it starts a new window. Operations the
 * gateway itself tracks are not timed here: the watcher's demand keeps it fast while they are pending.
 */
import type { Volume } from '../../contract/model';
import { motionOf } from './view';

export class TransitionWindows {
  readonly #windowMs: number;
  /** Per lower-case volume id in motion: its motion and when that was first seen. */
  #seen = new Map<string, { motion: string; since: number }>();

  /** @param windowMs how long one transition keeps polling fast, ms */
  constructor(windowMs: number) {
    this.#windowMs = windowMs;
  }

  /**
   * Takes a poll's view (by lower-case id) read at `now` and answers until when some transition's
   * window keeps polling fast (a time in ms; 0 when none does). Volumes no longer in motion, or
   * gone, are forgotten, so what is kept is bounded by the view.
   */
  update(view: ReadonlyMap<string, Volume>, now: number): number {
    const seen = new Map<string, { motion: string; since: number }>();
    let until = 0;
    for (const [id, v] of view) {
      const motion = motionOf(v);
      if (motion === null) continue;
      const before = this.#seen.get(id);
      const since = before && before.motion === motion ? before.since : now;
      seen.set(id, { motion, since });
      until = Math.max(until, since + this.#windowMs);
    }
    this.#seen = seen;
    return until;
  }
}
