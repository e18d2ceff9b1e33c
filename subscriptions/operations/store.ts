/**
 * Where operation records live. In the process for a single replica; the Redis store (scale-out)
 * implements the same interface, plus fenced writes ({@link SharedOperationStore}).
 */
import type { OperationRecord } from '../../adapters/contract/model';
import { TERMINAL } from './types';

export interface OperationStore {
  put(r: OperationRecord): Promise<void>;
  get(id: string): Promise<OperationRecord | null>;
  /** The records of one target (a volume's or snapshot's global id), any order. */
  forTarget(targetId: string): Promise<OperationRecord[]>;
}

/** A shared record with its fence: the version of the stored copy and the replica that drives it. */
export interface FencedRecord {
  record: OperationRecord;
  /** Bumped by every stored change; a write names the version it read. */
  version: number;
  /** Id of the replica driving it (null once it is terminal). */
  driver: string | null;
}

/** What a fenced write did. */
export type FencedWrite =
  | { written: true; version: number }
  /** Refused: the stored copy changed since `expected`, or is terminal. */
  | { written: false; version: number };

/** A running record in the shared index: what the hand-over sweep needs. */
export interface RunningEntry {
  id: string;
  deadline: number;
}

/**
 * Records shared between replicas (Redis): every write is a compare-and-set on the record's
 * version that never moves a terminal record back, and every stored change reaches the other
 * replicas in order (docs/scaling.md).
 */
export interface SharedOperationStore extends OperationStore {
  /** Id of this replica (names it as the driver of what it writes). */
  readonly replica: string;
  /**
   * Stores `r` if the shared copy is still at `expected` (0: new) and not terminal, with `driver`
   * (this replica, or null for a terminal record). While Redis does not answer, the record is kept
   * in this process only and the write counts as done at `expected`.
   */
  write(r: OperationRecord, expected: number, driver: string | null): Promise<FencedWrite>;
  /** The shared copy with its fence; throws when Redis does not answer. */
  read(id: string): Promise<FencedRecord | null>;
  /** Records still running, by deadline (oldest first), at most `limit`. Throws when Redis does not answer. */
  running(limit: number): Promise<RunningEntry[]>;
  /** Forgets a running-index entry whose record is gone (expired, or lost with Redis' data). */
  forgetRunning(id: string): Promise<void>;
  /**
   * Writes again what did not reach Redis while it was away, and the finished records this process
   * wrote that Redis no longer has (lost with its data); rejects when Redis does not answer (what
   * is left is kept for the next call). @returns the records refused by the fence
   */
  flush(): Promise<OperationRecord[]>;
}

/** Whether `store` shares its records with other replicas. */
export const isShared = (store: OperationStore): store is SharedOperationStore =>
  typeof (store as Partial<SharedOperationStore>).write === 'function';

export interface InProcessOperationStoreOptions {
  /** How long a finished operation stays readable. @default 3600000 (1 h) */
  retentionMs?: number;
  /** Most records kept; the oldest finished ones go first. @default 10000 */
  maxRecords?: number;
}

export class InProcessOperationStore implements OperationStore {
  readonly #records = new Map<string, OperationRecord>();
  /** Target id → ids of its records. */
  readonly #byTarget = new Map<string, Set<string>>();
  readonly #retentionMs: number;
  readonly #max: number;

  constructor(o: InProcessOperationStoreOptions = {}) {
    this.#retentionMs = o.retentionMs ?? 3_600_000;
    this.#max = o.maxRecords ?? 10_000;
  }

  async put(r: OperationRecord): Promise<void> {
    this.#records.delete(r.id);
    this.#records.set(r.id, { ...r });
    if (!this.#byTarget.has(r.targetId)) this.#byTarget.set(r.targetId, new Set());
    this.#byTarget.get(r.targetId)!.add(r.id);
    this.#evict();
  }

  async forTarget(targetId: string): Promise<OperationRecord[]> {
    const ids = [...(this.#byTarget.get(targetId) ?? [])];
    return ids.flatMap((id) => {
      const r = this.#records.get(id);
      return r ? [{ ...r }] : [];
    });
  }

  #drop(id: string): void {
    const r = this.#records.get(id);
    if (!r) return;
    this.#records.delete(id);
    const ids = this.#byTarget.get(r.targetId);
    ids?.delete(id);
    if (ids?.size === 0) this.#byTarget.delete(r.targetId);
  }

  async get(id: string): Promise<OperationRecord | null> {
    const r = this.#records.get(id);
    return r ? { ...r } : null;
  }

  /** Every record kept, oldest write first (copies). */
  all(): OperationRecord[] {
    return [...this.#records.values()].map((r) => ({ ...r }));
  }

  /** Drops finished records past retention, then the oldest (finished first) above the cap. */
  #evict(): void {
    const now = Date.now();
    for (const [id, r] of this.#records)
      if (TERMINAL.has(r.state) && now - r.updatedAt > this.#retentionMs) this.#drop(id);
    for (const [id, r] of this.#records) {
      if (this.#records.size <= this.#max) return;
      if (TERMINAL.has(r.state)) this.#drop(id);
    }
    // Only running ones left above the cap: the oldest go (their pollers finish unrecorded).
    for (const id of [...this.#records.keys()]) {
      if (this.#records.size <= this.#max) return;
      this.#drop(id);
    }
  }
}
