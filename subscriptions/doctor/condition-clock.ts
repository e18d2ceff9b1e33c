/**
 * When the doctor first saw each condition a check names (`DiagnosisContext.firstSeen`), per
 * backend. A full pass asks about every condition still present, so one that no pass asked about
 * has ended and is forgotten: if it comes back, its age starts again.
 */
import type { VolumeRef } from '../../adapters/contract/model';

const keyOf = (ref: VolumeRef, condition: string): string => `${ref.namespace}\0${ref.nativeId}\0${condition}`;

export class ConditionClock {
  readonly #seen = new Map<string, { at: number; pass: number }>();
  #pass = 0;

  /** When `condition` of `ref` was first seen; `now` (and remembered) the first time. */
  firstSeen(ref: VolumeRef, condition: string, now: number): number {
    const k = keyOf(ref, condition);
    const e = this.#seen.get(k);
    if (e) {
      e.pass = this.#pass;
      return e.at;
    }
    this.#seen.set(k, { at: now, pass: this.#pass });
    return now;
  }

  /** A full pass begins: what it does not ask about is forgotten at its end ({@link endPass}). */
  beginPass(): void {
    this.#pass += 1;
  }

  /** Forgets the conditions the pass since {@link beginPass} did not ask about. */
  endPass(): void {
    for (const [k, e] of this.#seen) if (e.pass < this.#pass) this.#seen.delete(k);
  }

  /** The first-seen times, to keep where another replica finds them ({@link seed}). */
  entries(): Array<[string, number]> {
    return [...this.#seen].map(([k, e]) => [k, e.at]);
  }

  /** Takes over another replica's first-seen times (they count as asked in the current pass). */
  seed(entries: ReadonlyArray<readonly [string, number]>): void {
    for (const [k, at] of entries) if (!this.#seen.has(k)) this.#seen.set(k, { at, pass: this.#pass });
  }

  get size(): number {
    return this.#seen.size;
  }
}
