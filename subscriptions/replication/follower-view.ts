/**
 * What subscribers were told, per backend: the volumes as the event log's events left them (each
 * event carries the volume as the watcher read it, `ChangeInput.volume`). Every replica keeps one
 * from the log it reads (view-follower.ts). A replica that takes a backend's watcher over compares
 * its first full read with it (replicated-watchers.ts), so a hand-over neither repeats nor misses a
 * change; other replicas answer watch-fed reads and subscription starts from it.
 *
 * A backend's view is complete once loaded from a snapshot (snapshots.ts) and followed since;
 * until then it holds only what changed and must answer nothing.
 */
import { encodeGlobalId } from '../../adapters/contract/ids';
import type { Volume, VolumeRef } from '../../adapters/contract/model';
import { volumeGlobalId } from '../events/diff';
import type { ChangeEvent } from '../events/types';

const refId = (r: VolumeRef): string =>
  encodeGlobalId({ kind: 'Volume', backend: r.backend, scope: r.namespace, nativeId: r.nativeId });

export class FollowerView {
  /** Per backend, volumes by global id. */
  readonly #volumes = new Map<string, Map<string, Volume>>();
  readonly #complete = new Set<string>();

  #of(backend: string): Map<string, Volume> {
    let m = this.#volumes.get(backend);
    if (!m) this.#volumes.set(backend, (m = new Map<string, Volume>()));
    return m;
  }

  /** Applies one event; answers the volume as it was before (null: not in the view). */
  apply(e: ChangeEvent): Volume | null {
    const m = this.#of(e.backend);
    const before = m.get(e.volumeId) ?? null;
    // The doctor's changes say nothing of the volume (theirs may be a stub).
    if (e.problem) return before;
    if (e.type === 'DELETED') m.delete(e.volumeId);
    else m.set(e.volumeId, e.volume);
    return before;
  }

  /** Replaces a backend's view with a full one (a snapshot, or a holder's first read) and marks it complete. */
  load(backend: string, volumes: readonly Volume[]): void {
    this.#volumes.set(backend, new Map(volumes.map((v) => [volumeGlobalId(v), v])));
    this.#complete.add(backend);
  }

  /** Marks a backend's view incomplete (a gap in what it followed): it answers nothing until loaded again. */
  forget(backend: string): void {
    this.#complete.delete(backend);
  }

  /** Marks every backend's view incomplete (the log was lost). */
  forgetAll(): void {
    this.#complete.clear();
  }

  complete(backend: string): boolean {
    return this.#complete.has(backend);
  }

  volumes(backend: string): Volume[] {
    return [...(this.#volumes.get(backend)?.values() ?? [])];
  }

  volume(ref: VolumeRef): Volume | undefined {
    return this.#volumes.get(ref.backend)?.get(refId(ref));
  }

  size(backend: string): number {
    return this.#volumes.get(backend)?.size ?? 0;
  }
}
