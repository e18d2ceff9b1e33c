/**
 * Where operation records live. In the process for a single replica; the Redis store (scale-out)
 * implements the same interface.
 */
import type { OperationRecord } from '../../adapters/contract/model';
import { TERMINAL } from './types';

export interface OperationStore {
  put(r: OperationRecord): Promise<void>;
  get(id: string): Promise<OperationRecord | null>;
  /** The records of one target (a volume's or snapshot's global id), any order. */
  forTarget(targetId: string): Promise<OperationRecord[]>;
}

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
