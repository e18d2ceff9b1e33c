/**
 * Deltas from one full view of a backend's volumes to the next, the same for every watcher and for
 * a replica taking a watcher over: new volumes, changed ones and (last) the ones gone, which is how
 * a deletion shows when listing. Both maps are keyed alike (the caller's choice of key).
 */
import type { Volume } from './model';
import type { VolumeDelta } from './watch';

const same = (a: Volume, b: Volume): boolean => JSON.stringify(a) === JSON.stringify(b);

/** Deltas from `before` to `after` (maps keyed alike), observed at `observedAt`. */
export function diffViews(
  before: ReadonlyMap<string, Volume>,
  after: ReadonlyMap<string, Volume>,
  observedAt: string,
): VolumeDelta[] {
  const out: VolumeDelta[] = [];
  for (const [id, v] of after) {
    const prev = before.get(id);
    if (!prev) out.push({ before: null, after: v, observedAt });
    else if (!same(prev, v)) out.push({ before: prev, after: v, observedAt });
  }
  for (const [id, prev] of before) if (!after.has(id)) out.push({ before: prev, after: null, observedAt });
  return out;
}
