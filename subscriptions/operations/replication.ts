/**
 * Tracked operations across replicas on one Redis (docs/scaling.md): the pieces a tracker with a
 * {@link RedisOperationStore} needs so that any replica follows and finishes any operation.
 * - every stored change reaches every replica's listeners (`operationUpdated`, the feed's demand)
 *   through the operations stream (./change-reader.ts), in order, terminal included;
 * - this replica's liveness key (./presence.ts) says it still drives what it wrote;
 * - a sweep (./handover.ts) finishes what a lost replica drove.
 */
import type { RedisClient } from '../redis-client';
import { OperationChangeReader, type OperationChange } from './change-reader';
import { OperationHandover, type OperationHandoverOptions } from './handover';
import { ReplicaPresence } from './presence';
import type { RedisOperationStore } from './redis-store';
import type { OperationTracker } from './tracker';
import type { OperationReplication } from './tracker-options';
import { TERMINAL } from './types';

/** Options of {@link RedisOperationReplication}. */
export interface RedisOperationReplicationOptions {
  /** The shared client (the stream reader duplicates it; the caller owns it). */
  client: RedisClient;
  store: RedisOperationStore;
  /**
   * Whether this replica takes over the watched operations of `backend` whose replica was lost
   * (it must also have a watcher current for the operation's scope). Pass "holds the backend's
   * watcher lease" once leases exist. @default every replica may (each runs its own watchers)
   */
  isLeaseHolder?: (backend: string) => boolean;
  /** TTL of this replica's liveness key: how long a lost replica's operations wait for a new driver. @default 10000 */
  replicaTtlMs?: number;
  /** Interval of the hand-over sweep (how late past its deadline an orphan ends). @default 2000 */
  sweepMs?: number;
  /** How long one stream read blocks. @default 5000 */
  blockMs?: number;
  /** Redis trouble of the reader, the liveness key or the sweep (logged by the server). Must not throw. @default none */
  onError?: (what: 'stream' | 'presence' | 'sweep', err: unknown) => void;
  onHandover?: OperationHandoverOptions['onHandover'];
}

export class RedisOperationReplication implements OperationReplication {
  readonly #o: RedisOperationReplicationOptions;
  readonly presence: ReplicaPresence;
  /** Driver of each running record, as the stream told it. */
  readonly #drivers = new Map<string, string>();
  #reader: OperationChangeReader | null = null;
  #sweep: OperationHandover | null = null;
  #timer: NodeJS.Timeout | null = null;

  constructor(o: RedisOperationReplicationOptions) {
    this.#o = o;
    this.presence = new ReplicaPresence({
      client: o.client,
      keys: o.store.keys,
      replica: o.store.replica,
      ttlMs: o.replicaTtlMs,
      onError: (err) => o.onError?.('presence', err),
    });
  }

  start(tracker: OperationTracker): void {
    const { store } = this.#o;
    this.presence.start();
    this.#reader = new OperationChangeReader({
      client: this.#o.client,
      keys: store.keys,
      blockMs: this.#o.blockMs,
      onChanges: (changes) => changes.forEach((c) => this.#apply(tracker, c)),
      onResync: () => this.#resync(tracker),
      onError: (err) => this.#o.onError?.('stream', err),
    });
    this.#reader.start();
    this.#sweep = new OperationHandover({
      store,
      tracker,
      presence: this.presence,
      isLeaseHolder: this.#o.isLeaseHolder ?? (() => true),
      driverOf: (id) => this.#drivers.get(id),
      onError: (err) => this.#o.onError?.('sweep', err),
      onHandover: this.#o.onHandover,
    });
    this.#timer = setInterval(() => void this.#sweep?.sweep(), this.#o.sweepMs ?? 2000);
    this.#timer.unref();
  }

  /** Stops the sweep and the reader, and deletes the liveness key (others take over at once). */
  async close(): Promise<void> {
    if (this.#timer) clearInterval(this.#timer);
    await this.#reader?.close();
    await this.presence.stop();
  }

  #apply(tracker: OperationTracker, c: OperationChange): void {
    if (TERMINAL.has(c.record.state)) this.#drivers.delete(c.record.id);
    else this.#drivers.set(c.record.id, c.writer);
    if (c.writer !== this.#o.store.replica) tracker.receive(c.record, c.version);
  }

  /**
   * Back after Redis was away: writes back what this replica holds that Redis missed, then
   * re-reads the running records listeners wait on; the tracker passes on what changed.
   * @returns false when the write-back failed (the reader asks again)
   */
  async #resync(tracker: OperationTracker): Promise<boolean> {
    const written = await tracker.writeBack().then(
      () => true,
      (err: unknown) => {
        this.#o.onError?.('stream', err);
        return false;
      },
    );
    const ids = tracker.interest();
    const read = await Promise.all(ids.map((id) => this.#o.store.read(id).catch(() => null)));
    for (const f of read) {
      if (!f || tracker.drives(f.record.id)) continue;
      if (f.driver) this.#drivers.set(f.record.id, f.driver);
      tracker.receive(f.record, f.version);
    }
    return written;
  }
}
