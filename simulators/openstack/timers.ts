/**
 * Every asynchronous transition is a timer registered here, so `close()` can cancel them all
 * and a late timer never touches a closed simulator.
 */
export class Timers {
  private readonly pending = new Set<NodeJS.Timeout>();
  private closed = false;

  /** Runs `fn` after `ms` (never when `ms` is Infinity). Errors are swallowed: the state may have moved on. */
  after(ms: number, fn: () => void): void {
    if (this.closed || !Number.isFinite(ms)) return;
    const t = setTimeout(
      () => {
        this.pending.delete(t);
        if (this.closed) return;
        try {
          fn();
        } catch {
          // A transition whose resource vanished meanwhile (deleted, reset) simply does nothing.
        }
      },
      Math.max(0, ms),
    );
    this.pending.add(t);
  }

  /** Number of transitions still scheduled. */
  get size(): number {
    return this.pending.size;
  }

  clearAll(): void {
    for (const t of this.pending) clearTimeout(t);
    this.pending.clear();
  }

  close(): void {
    this.closed = true;
    this.clearAll();
  }
}
