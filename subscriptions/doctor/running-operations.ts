/**
 * The gateway's own running operations by volume, kept from the tracker's state changes, so a
 * check asks "is one of ours changing this volume, inside its deadline?" without a lookup per
 * volume (a transition an operation drives is never a problem).
 */
import { decodeGlobalId } from '../../adapters/contract/ids';
import type { OperationRecord, OperationState, VolumeRef } from '../../adapters/contract/model';

const TERMINAL: ReadonlySet<OperationState> = new Set(['SUCCEEDED', 'FAILED', 'TIMED_OUT']);

const keyOf = (backend: string, scope: string, nativeId: string): string => `${backend}\0${scope}\0${nativeId}`;

export class RunningOperations {
  /** Volume key → operation id → its deadline (ms since epoch). */
  readonly #byVolume = new Map<string, Map<string, number>>();

  /** Takes one state change of the tracker. */
  update(r: OperationRecord): void {
    let target;
    try {
      target = decodeGlobalId(r.targetId, null);
    } catch {
      return;
    }
    if (target.kind !== 'Volume') return;
    const k = keyOf(target.backend, target.scope, target.nativeId);
    const ops = this.#byVolume.get(k) ?? new Map<string, number>();
    if (TERMINAL.has(r.state)) ops.delete(r.id);
    else ops.set(r.id, r.deadline);
    if (ops.size === 0) this.#byVolume.delete(k);
    else this.#byVolume.set(k, ops);
  }

  /** Whether an operation of the gateway's is changing `ref` and still inside its deadline at `now`. */
  running(ref: VolumeRef, now: number): boolean {
    const ops = this.#byVolume.get(keyOf(ref.backend, ref.namespace, ref.nativeId));
    if (!ops) return false;
    for (const deadline of ops.values()) if (deadline > now) return true;
    return false;
  }

  get size(): number {
    return this.#byVolume.size;
  }
}
