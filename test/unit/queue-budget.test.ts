/**
 * The per-address budget of queued bytes (server/ws/queue-budget.ts) over queues whose sizes the
 * test sets: which queue is cut and when. The transports' own queues are tested with real
 * processes (test/ws/address-bounds.test.ts, test/streams/metrics.test.ts).
 */
import type { SlowConsumerCutReason } from '../../server/metrics';
import { QueueBudget, type OutgoingQueue, type TrackedQueue } from '../../server/ws/queue-budget';

/** A queue of `bytes`; a cut stream lets go of its bytes at once, a cut socket keeps them until `gone()`. */
class Queue implements OutgoingQueue {
  cuts: SlowConsumerCutReason[] = [];
  tracked!: TrackedQueue;

  constructor(
    readonly transport: 'ws' | 'sse',
    public bytes: number,
  ) {}

  queuedBytes(): number {
    return this.bytes;
  }

  cut(reason: SlowConsumerCutReason): void {
    this.cuts.push(reason);
    if (this.transport === 'sse') {
      this.bytes = 0;
      this.tracked.untrack();
    } else this.tracked.closing();
  }

  write(bytes: number): void {
    this.bytes += bytes;
    this.tracked.wrote(this.bytes);
  }
}

const turn = (): Promise<void> => new Promise((r) => setImmediate(r));

function track(budget: QueueBudget, address: string, q: Queue): Queue {
  q.tracked = budget.track(address, q);
  return q;
}

describe('QueueBudget', () => {
  it('should cut the largest queues of an address once its sum passes the budget, after the turn of writes, and no other address', async () => {
    const budget = new QueueBudget(100);
    const [a, b, c] = Array.from({ length: 3 }, () => track(budget, '10.0.0.1', new Queue('sse', 0)));
    const other = track(budget, '10.0.0.2', new Queue('sse', 0));
    a!.write(30);
    b!.write(50);
    other.write(90);
    // 30 + 50 + 40 = 120: over, but settled only once the writes of this turn went out.
    a!.write(40);
    expect(a!.cuts).toEqual([]);
    await turn();
    expect([a!.cuts, b!.cuts, c!.cuts, other.cuts]).toEqual([['address'], [], [], []]);
    expect(budget.addresses).toBe(2);
  });

  it('should count again before cutting: a queue that drained since its last write is no slow consumer', async () => {
    const budget = new QueueBudget(100);
    const a = track(budget, 'x', new Queue('sse', 0));
    const b = track(budget, 'x', new Queue('sse', 0));
    a.write(90);
    a.bytes = 0; // the network took it
    b.write(60);
    await turn();
    expect([a.cuts, b.cuts]).toEqual([[], []]);
  });

  it('should count a closing socket until it is gone, and never cut an empty queue (a reader that keeps up)', async () => {
    const budget = new QueueBudget(100);
    const socket = track(budget, 'x', new Queue('ws', 0));
    const stream = track(budget, 'x', new Queue('sse', 0));
    const reader = track(budget, 'x', new Queue('sse', 0));
    socket.write(80);
    stream.write(30);
    reader.write(0);
    await turn();
    // The socket is closing but holds its 80 bytes: the stream goes too; the empty reader stays.
    expect([socket.cuts, stream.cuts, reader.cuts]).toEqual([['address'], ['address'], []]);
    const next = track(budget, 'x', new Queue('sse', 0));
    next.write(30);
    await turn();
    expect(next.cuts).toEqual(['address']);
    // Once the socket is gone, the address has room again.
    socket.tracked.untrack();
    const last = track(budget, 'x', new Queue('sse', 0));
    last.write(90);
    await turn();
    expect(last.cuts).toEqual([]);
  });

  it('should forget an address once its last queue is untracked', () => {
    const budget = new QueueBudget(100);
    const q = track(budget, 'x', new Queue('sse', 0));
    q.write(10);
    q.tracked.untrack();
    q.tracked.untrack();
    expect(budget.addresses).toBe(0);
  });
});
