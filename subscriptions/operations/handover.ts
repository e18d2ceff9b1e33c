/**
 * The hand-over sweep: finds running records whose driving replica is gone (its liveness key,
 * ./presence.ts, expired or was deleted) in the index of running records, and finishes them:
 * - on a backend whose watcher this replica holds (`isLeaseHolder`, and a watcher current for the
 *   scope), it takes the operation over and drives it with the service credential, as watched
 *   operations are driven;
 * - otherwise, once its deadline passed, it ends it `TIMED_OUT` with a reason naming the lost
 *   replica (nobody else holds the caller's credential to check it).
 * Every replica sweeps; the fenced writes let one win. Drivers are known from the change stream,
 * so a sweep costs one `ZRANGE` and one `MGET` of liveness keys, plus a read per orphan.
 */
import type { ReplicaPresence } from './presence';
import type { FencedRecord, SharedOperationStore } from './store';
import type { OperationTracker } from './tracker';
import type { OperationRecord } from '../../adapters/contract/model';

/** Options of {@link OperationHandover}. */
export interface OperationHandoverOptions {
  store: SharedOperationStore;
  presence: ReplicaPresence;
  tracker: OperationTracker;
  /** Whether this replica takes over the watched operations of `backend`. */
  isLeaseHolder: (backend: string) => boolean;
  /** The driver of a running record, when the change stream told it. */
  driverOf: (id: string) => string | undefined;
  /** Most running records looked at per sweep (oldest deadline first). @default 1000 */
  maxRunning?: number;
  /** Called when a sweep fails (Redis away). Must not throw. @default none */
  onError?: (err: unknown) => void;
  /** Called for each operation taken over or timed out here. @default none */
  onHandover?: (r: OperationRecord, outcome: 'adopted' | 'timed-out', lostReplica: string | null) => void;
}

/** The failure reason of an operation whose replica was lost. */
export function lostReplicaReason(r: OperationRecord, replica: string | null): string {
  const target = /SNAPSHOT/.test(r.kind) ? 'snapshot' : 'volume';
  return `the replica that polled it (${replica ?? 'unknown'}) stopped before it finished; the change may still have happened on the backend: read the ${target}`;
}

export class OperationHandover {
  readonly #o: OperationHandoverOptions;
  #sweeping: Promise<void> | null = null;

  constructor(o: OperationHandoverOptions) {
    this.#o = o;
  }

  /** One sweep (a sweep already running is joined). Never rejects. */
  sweep(): Promise<void> {
    this.#sweeping ??= this.#sweep()
      .catch((err: unknown) => this.#o.onError?.(err))
      .finally(() => (this.#sweeping = null));
    return this.#sweeping;
  }

  async #sweep(): Promise<void> {
    const { store, tracker } = this.#o;
    const running = (await store.running(this.#o.maxRunning ?? 1000)).filter((e) => !tracker.drives(e.id));
    if (running.length === 0) return;
    // Drivers the stream did not tell (records written before this replica started) are read.
    const known = new Map<string, string | null>();
    const unknown: string[] = [];
    for (const e of running) {
      const d = this.#o.driverOf(e.id);
      if (d === undefined) unknown.push(e.id);
      else known.set(e.id, d);
    }
    const read = new Map<string, FencedRecord | null>();
    for (const [id, f] of await Promise.all(unknown.map(async (id) => [id, await store.read(id)] as const))) {
      read.set(id, f);
      known.set(id, f?.driver ?? null);
    }
    const drivers = [...known.values()].filter((d): d is string => d !== null && d !== store.replica);
    const alive = await this.#o.presence.alive(drivers);
    const now = Date.now();
    for (const e of running) {
      const driver = known.get(e.id) ?? null;
      if (driver === store.replica || (driver !== null && alive.has(driver))) continue;
      const f = read.has(e.id) ? read.get(e.id)! : await store.read(e.id);
      if (!f) {
        await store.forgetRunning(e.id);
        continue;
      }
      if (f.driver !== driver && f.driver !== null) continue; // changed hands since: the next sweep looks again
      if (this.#o.isLeaseHolder(f.record.backend) && (await tracker.adopt(f))) {
        this.#o.onHandover?.(f.record, 'adopted', f.driver);
      } else if (now >= f.record.deadline && (await tracker.timeOut(f, lostReplicaReason(f.record, f.driver)))) {
        this.#o.onHandover?.(f.record, 'timed-out', f.driver);
      }
    }
  }
}
