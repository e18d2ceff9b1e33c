/**
 * Changes that finish after a delay: the mutation answers at once with the volume in its
 * in-between status (CREATING, EXTENDING …) and a completion rule naming the change; after
 * `operationDelayMs` the change is applied (the watcher sees it) and `checkChange` answers
 * SUCCEEDED. With no delay, changes apply before the mutation answers and carry no rule.
 */
import { randomUUID } from 'node:crypto';
import type { PendingChange } from '../../contract/completion';
import type { ChangeCheck, CompletionRule } from '../../contract/completion';

/** The rule name this backend's changes carry. */
export const RULE = 'memoryChange';

interface Change {
  /** Applies the change; a string is why it failed. */
  finish: () => string | void;
  timer: ReturnType<typeof setTimeout> | null;
  /** What it changes (a volume's key), so a status it holds is known to be held by a running change. */
  key?: string;
  state: 'RUNNING' | 'SUCCEEDED' | 'FAILED';
  reason?: string;
  endedAt?: number;
}

/** How long a finished change is still answered for (the tracker checks within seconds). */
const KEEP_MS = 3_600_000;

export class DelayedChanges {
  readonly #changes = new Map<string, Change>();

  constructor(
    /** Ms before a change applies (setting `operationDelayMs`). 0: at once. */
    public delayMs: number,
  ) {}

  /**
   * Runs `finish` after the delay and returns the pending change; with no delay runs it now and
   * returns null (done). A string from `finish` fails the change with that reason. `key` names what
   * it changes ({@link runningOn}).
   */
  start(finish: () => string | void, key?: string): PendingChange | null {
    if (this.delayMs <= 0) {
      finish();
      return null;
    }
    this.#prune();
    const id = randomUUID();
    const c: Change = { finish, timer: null, state: 'RUNNING', key };
    c.timer = setTimeout(() => this.#finish(c), this.delayMs);
    c.timer.unref?.();
    this.#changes.set(id, c);
    return { rule: { name: RULE, params: { change: id }, seen: {} } };
  }

  /** Where the rule's change is. Unknown (lost in a restart, or long done): FAILED, saying so. */
  check(rule: CompletionRule): ChangeCheck {
    const c =
      rule.name === RULE && typeof rule.params.change === 'string' ? this.#changes.get(rule.params.change) : undefined;
    if (!c)
      return {
        progress: { state: 'FAILED', reason: 'the memory backend no longer knows this change (restarted or reset)' },
        seen: rule.seen,
      };
    if (c.state === 'FAILED')
      return { progress: { state: 'FAILED', reason: c.reason ?? 'failed', backendStatus: 'error' }, seen: rule.seen };
    return { progress: { state: c.state, backendStatus: c.state === 'RUNNING' ? 'running' : 'done' }, seen: rule.seen };
  }

  /** Changes still running. */
  get running(): number {
    let n = 0;
    for (const c of this.#changes.values()) if (c.state === 'RUNNING') n++;
    return n;
  }

  /** Whether a change started with `key` is still running. */
  runningOn(key: string): boolean {
    for (const c of this.#changes.values()) if (c.state === 'RUNNING' && c.key === key) return true;
    return false;
  }

  /** Ends every running change as FAILED with `reason`, without applying it (reset, reload, close). */
  abandon(reason: string): void {
    for (const c of this.#changes.values()) {
      if (c.state !== 'RUNNING') continue;
      if (c.timer) clearTimeout(c.timer);
      c.state = 'FAILED';
      c.reason = reason;
      c.endedAt = Date.now();
    }
  }

  #finish(c: Change): void {
    c.timer = null;
    let failed: string | void;
    try {
      failed = c.finish();
    } catch (err) {
      failed = err instanceof Error ? err.message : String(err);
    }
    c.state = failed ? 'FAILED' : 'SUCCEEDED';
    if (failed) c.reason = failed;
    c.endedAt = Date.now();
  }

  #prune(): void {
    const old = Date.now() - KEEP_MS;
    for (const [id, c] of this.#changes) if (c.endedAt !== undefined && c.endedAt < old) this.#changes.delete(id);
  }
}
