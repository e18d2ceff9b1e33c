/**
 * The watcher's view of one Nomad: every volume as last read in full (service credential), an
 * index from claiming allocation to volumes (Allocation events name the allocation only), and
 * what a fresh volume list says must be read again. Pure bookkeeping: no I/O.
 */
import type { Volume, VolumeRef } from '../../contract/model';
import { nomadDetails } from '../model';
import type { VolumeDelta } from '../../contract/watch';
import { num } from '../wire/scalars';
import type { WireVolumeStub } from '../wire/types';

/** The view's key of a volume: namespace and id. */
export const viewKey = (namespace: string, id: string): string => `${namespace}\u0000${id}`;
export const refKey = (r: VolumeRef): string => viewKey(r.namespace, r.nativeId);

/** What a list says about the view. */
export interface ListPlan {
  /**
   * New volumes, and volumes whose ModifyIndex differs from the view's: moved on (claims move it
   * too), or back, when a restarted Nomad lost writes the view had seen.
   */
  read: VolumeRef[];
  /** In the view, not in the list: deleted (or no longer visible to the service token). */
  gone: VolumeRef[];
}

const modifyIndex = (v: Volume): number => nomadDetails(v)?.modifyIndex ?? 0;
const same = (a: Volume | null, b: Volume | null): boolean => JSON.stringify(a) === JSON.stringify(b);

export class WatchView {
  readonly #volumes = new Map<string, Volume>();
  readonly #byAlloc = new Map<string, Set<string>>();

  constructor(private readonly backend: string) {}

  get size(): number {
    return this.#volumes.size;
  }

  /** Every volume in the view. */
  all(): Volume[] {
    return [...this.#volumes.values()];
  }

  get(ref: VolumeRef): Volume | undefined {
    return this.#volumes.get(refKey(ref));
  }

  ref(namespace: string, id: string): VolumeRef {
    return { backend: this.backend, namespace, nativeId: id };
  }

  /** Volumes claimed by this allocation, as the view last saw them. */
  claimedBy(allocationId: string): VolumeRef[] {
    return [...(this.#byAlloc.get(allocationId) ?? [])].map((k) => this.#volumes.get(k)!.ref);
  }

  /** Volumes with at least one claim: only their allocations' status can change without a volume write. */
  claimed(): VolumeRef[] {
    return [...this.#volumes.values()].filter((v) => v.attachments.length > 0).map((v) => v.ref);
  }

  /** Compares a full list (every namespace) with the view. */
  plan(stubs: readonly WireVolumeStub[]): ListPlan {
    const listed = new Set<string>();
    const read: VolumeRef[] = [];
    for (const s of stubs) {
      const key = viewKey(s.Namespace, s.ID);
      listed.add(key);
      const known = this.#volumes.get(key);
      if (!known || (num(s.ModifyIndex) ?? 0) !== modifyIndex(known)) read.push(this.ref(s.Namespace, s.ID));
    }
    const gone = [...this.#volumes.entries()].filter(([k]) => !listed.has(k)).map(([, v]) => v.ref);
    return { read, gone };
  }

  /** Records `after` (null: gone) for `ref`; the delta when anything the model shows changed. */
  apply(ref: VolumeRef, after: Volume | null, observedAt: string): VolumeDelta | null {
    const key = refKey(ref);
    const before = this.#volumes.get(key) ?? null;
    if (same(before, after)) return null;
    for (const a of before?.attachments ?? []) this.#byAlloc.get(a.consumerId)?.delete(key);
    if (after) {
      this.#volumes.set(key, after);
      for (const a of after.attachments) {
        let s = this.#byAlloc.get(a.consumerId);
        if (!s) this.#byAlloc.set(a.consumerId, (s = new Set()));
        s.add(key);
      }
    } else {
      this.#volumes.delete(key);
    }
    for (const a of before?.attachments ?? [])
      if (this.#byAlloc.get(a.consumerId)?.size === 0) this.#byAlloc.delete(a.consumerId);
    return { before, after, observedAt };
  }
}
