/**
 * What a replica that starts a backend's watcher (a lease taken over, or the log made whole after
 * Redis lost entries) appends: the changes from the view subscribers were told of, as the shared
 * log left it, to the watcher's first read (adapters/contract/view-diff.ts).
 */
import type { Volume } from '../../adapters/contract/model';
import type { VolumeDelta } from '../../adapters/contract/watch';
import { diffViews } from '../../adapters/contract/view-diff';
import { volumeGlobalId } from '../events/diff';

/** Deltas from the volumes subscribers were told of to the watcher's first read. */
export function takeoverDeltas(told: readonly Volume[], read: readonly Volume[], observedAt: string): VolumeDelta[] {
  const byId = (vs: readonly Volume[]): Map<string, Volume> => new Map(vs.map((v) => [volumeGlobalId(v), v]));
  return diffViews(byId(told), byId(read), observedAt);
}
