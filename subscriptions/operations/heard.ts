/**
 * What a tracker remembers of the records it read or heard of (./tracker.ts): the newest version
 * heard, so that a change heard twice (the stream, then a re-read) or late is passed on once, and
 * which running records its listeners may wait on (re-read after the change stream was away).
 */
import { TERMINAL } from './types';
import type { OperationRecord, OperationState } from '../../adapters/contract/model';

/** Records remembered at most; the oldest go first. */
const MAX_HEARD = 10_000;
/** A running record past its deadline by this much is forgotten (it ends, or expires, by then). */
const GRACE_MS = 60_000;

interface Heard {
  deadline: number;
  /** Newest version heard (0: unknown). */
  version: number;
  terminal: boolean;
  state: OperationState;
  backendStatus: string | null;
}

export class HeardRecords {
  readonly #heard = new Map<string, Heard>();

  /**
   * Notes `r` at `version` (0: unknown). @returns whether listeners should hear of it: it is newer
   * than anything heard and changes what they show (a takeover's claim changes only the driver)
   */
  note(r: OperationRecord, version: number): boolean {
    const known = this.#heard.get(r.id);
    if (known && (known.terminal || (version > 0 && version <= known.version))) return false;
    if (!known && this.#heard.size >= MAX_HEARD) {
      const oldest = this.#heard.keys().next().value;
      if (oldest !== undefined) this.#heard.delete(oldest);
    }
    this.#heard.set(r.id, {
      deadline: r.deadline,
      version: Math.max(version, known?.version ?? 0),
      terminal: TERMINAL.has(r.state),
      state: r.state,
      backendStatus: r.backendStatus,
    });
    return !known || known.state !== r.state || known.backendStatus !== r.backendStatus;
  }

  /** Ids of the running records heard of (past their deadline by a minute: forgotten). */
  running(now = Date.now()): string[] {
    const ids: string[] = [];
    for (const [id, k] of this.#heard) {
      if (k.deadline < now - GRACE_MS) this.#heard.delete(id);
      else if (!k.terminal) ids.push(id);
    }
    return ids;
  }
}
