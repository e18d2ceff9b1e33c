/**
 * The outgoing bytes one client address may have queued across all its subscription transports:
 * graphql-ws sockets, SSE and multipart streams (`WS_MAX_BUFFERED_BYTES_PER_ADDRESS`). Each queue
 * is already bounded on its own (`WS_MAX_BUFFERED_BYTES`), but an address may hold 100 sockets and
 * 1,000 HTTP streams, so about 1 GiB of queues without this. Past the budget the address's largest
 * queue is cut as a slow consumer (a socket 4413, a stream without an end), then the next largest,
 * until the address is back within it: the largest is the consumer furthest behind, and cutting it
 * frees the most; a reader that keeps up has an empty queue and is never the one cut.
 *
 * Queues drain without telling: each one's bytes are read when it is written to, and the
 * address's sum from those readings can only be higher than the truth (a queue shrinks between
 * writes, never grows). So the sum is updated in O(1) per write and counted again from every
 * queue only when it passes the budget; a queue is cut only if the counted sum is still over.
 */
import type { QueueTransportName, SlowConsumerCutReason } from '../metrics';

/** One outgoing queue as the budget sees it: a socket, or an HTTP stream's response. */
export interface OutgoingQueue {
  readonly transport: QueueTransportName;
  /** Bytes queued now and not yet taken by the network. */
  queuedBytes(): number;
  /** Cuts it as a slow consumer; it takes nothing more from then on, and calls `closing()` or `untrack()` on its tracked queue. */
  cut(reason: SlowConsumerCutReason): void;
}

/** One address's queues and the sum of their bytes as last read. */
class AddressQueues {
  readonly entries = new Set<TrackedQueue>();
  /** Never below the true sum. */
  estimate = 0;
  /** A settle is scheduled. */
  settling = false;

  constructor(readonly address: string) {}
}

/**
 * A queue the budget counts: `wrote` after each write, `closing` once it takes nothing more but
 * still holds what it queued (a socket closing), `untrack` once that is gone too.
 */
export class TrackedQueue {
  /** Its bytes when last read. */
  last = 0;
  /** Takes nothing more; still counted until untracked. */
  isClosing = false;
  #tracked = true;

  constructor(
    readonly queue: OutgoingQueue,
    private readonly group: AddressQueues,
    private readonly budget: QueueBudget,
  ) {}

  /** Called after each write with the queue's bytes now: cuts the address's largest queues once it is over the budget. */
  wrote(queuedBytes: number): void {
    if (!this.#tracked) return;
    this.group.estimate += queuedBytes - this.last;
    this.last = queuedBytes;
    if (this.group.estimate > this.budget.maxBytesPerAddress) this.budget.settleSoon(this.group);
  }

  /** The queue takes nothing more (it is cut or closing), but what it queued is still held and counted. */
  closing(): void {
    this.isClosing = true;
  }

  /** What the queue held is gone (its connection closed or was destroyed): it no longer counts (idempotent). */
  untrack(): void {
    if (!this.#tracked) return;
    this.#tracked = false;
    this.group.estimate -= this.last;
    this.group.entries.delete(this);
    this.budget.forget(this.group);
  }
}

export class QueueBudget {
  readonly #byAddress = new Map<string, AddressQueues>();

  /** @param maxBytesPerAddress `WS_MAX_BUFFERED_BYTES_PER_ADDRESS` */
  constructor(readonly maxBytesPerAddress: number) {}

  /** Counts `queue` against `address` (already bucketed: IPv6 by /64) from now on. */
  track(address: string, queue: OutgoingQueue): TrackedQueue {
    let g = this.#byAddress.get(address);
    if (!g) this.#byAddress.set(address, (g = new AddressQueues(address)));
    const t = new TrackedQueue(queue, g, this);
    g.entries.add(t);
    return t;
  }

  /** Addresses with a queue tracked now. */
  get addresses(): number {
    return this.#byAddress.size;
  }

  /**
   * @internal The sum passed the budget: settled once the writes of this turn of the event loop
   * went to the network. An HTTP response holds its writes until the end of the turn (Node corks
   * it), and one batch of events written to many readers that keep up reaches megabytes there
   * (400 SSE readers, 80 events of 8 KB: 247 MiB) and nothing once flushed; only what the network
   * did not take is a slow consumer's.
   */
  settleSoon(g: AddressQueues): void {
    if (g.settling) return;
    g.settling = true;
    setImmediate(() => {
      g.settling = false;
      this.settle(g);
    });
  }

  /** Counts `g`'s queues again, and cuts the largest while the sum is over the budget. */
  private settle(g: AddressQueues): void {
    let total = 0;
    for (const t of g.entries) total += t.last = t.queue.queuedBytes();
    g.estimate = total;
    while (g.estimate > this.maxBytesPerAddress) {
      // Closing queues still count (a socket keeps its queue until the peer answers the close, or
      // for CLOSE_WAIT_MS) but cannot be cut again; an empty queue is a reader that keeps up, and
      // cutting it would free nothing.
      let largest: TrackedQueue | undefined;
      for (const t of g.entries) if (!t.isClosing && t.last > 0 && (!largest || t.last > largest.last)) largest = t;
      if (!largest) return;
      largest.closing();
      // A stream lets go of its queue at once (it is untracked then); a socket when it is closed.
      largest.queue.cut('address');
    }
  }

  /** @internal */
  forget(g: AddressQueues): void {
    if (g.entries.size === 0 && this.#byAddress.get(g.address) === g) this.#byAddress.delete(g.address);
  }
}
