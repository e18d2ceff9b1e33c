/** The per-subscription stream: reservation order, bound (SLOW_CONSUMER), return() while waiting. */
import { SlowConsumerError } from '../../adapters/contract/errors';
import { LiveStream } from '../../subscriptions/live/stream';
import { SerializedResult } from '../../subscriptions/live/types';

const r = (n: number): SerializedResult => new SerializedResult(JSON.stringify({ data: { n } }));
const n = (x: unknown): number => ((x as SerializedResult).toJSON() as { data: { n: number } }).data.n;

describe('LiveStream', () => {
  it('yields in reservation order even when a later slot settles first, skipping nulls', async () => {
    let closed = 0;
    const s = new LiveStream({ onClose: () => closed++ });
    let settleFirst!: (v: SerializedResult) => void;
    s.push(new Promise((res) => (settleFirst = res)));
    s.push(null);
    s.push(r(2));
    const first = s.next();
    settleFirst(r(1));
    expect(n((await first).value)).toBe(1);
    expect(n((await s.next()).value)).toBe(2);
    s.end(r(3));
    expect(n((await s.next()).value)).toBe(3);
    expect((await s.next()).done).toBe(true);
    expect(closed).toBe(1);
  });

  it('ends a pending next() on return() and frees once', async () => {
    let closed = 0;
    const s = new LiveStream({ onClose: () => closed++ });
    const waiting = s.next();
    await s.return();
    expect((await waiting).done).toBe(true);
    await s.return();
    expect(closed).toBe(1);
    s.push(r(1));
    expect(s.queued).toBe(0);
  });

  it('throws SlowConsumerError past its bound and unsubscribes at once', async () => {
    let closed = 0;
    let overflows = 0;
    const s = new LiveStream({ maxQueued: 3, onClose: () => closed++, onOverflow: () => overflows++ });
    for (let i = 0; i < 4; i++) s.push(r(i));
    expect(overflows).toBe(1);
    expect(closed).toBe(1);
    await expect(s.next()).rejects.toBeInstanceOf(SlowConsumerError);
    await expect(s.next()).resolves.toEqual({ value: undefined, done: true });
  });

  it('hands shared results to its sink at once while next() waits, and everything else through next(), in order', async () => {
    const s = new LiveStream({ onClose: () => undefined });
    const sunk: number[] = [];
    s.shareTo({ sendShared: (x) => void sunk.push(n(x)) });
    // Nobody waits yet: queued for next(), not sunk.
    s.push(r(1));
    expect(sunk).toEqual([]);
    expect(n((await s.next()).value)).toBe(1);
    // Waiting: shared results go to the sink synchronously and next() keeps waiting.
    let got: IteratorResult<unknown> | undefined;
    void s.next().then((x) => (got = x));
    const a = s.reserve()!;
    const b = s.reserve()!;
    s.settle(b, r(3));
    expect(sunk).toEqual([]); // 3 waits behind the slot reserved before it
    s.settle(a, r(2));
    expect(sunk).toEqual([2, 3]);
    await Promise.resolve();
    expect(got).toBeUndefined();
    // A result of the subscriber's own (errors) ends the wait; a shared one after it queues behind it.
    const own = { errors: [{ message: 'own' }] };
    s.push(own as never);
    s.push(r(4));
    await Promise.resolve();
    expect(got?.value).toBe(own);
    expect(sunk).toEqual([2, 3]);
    expect(n((await s.next()).value)).toBe(4);
    await s.return();
    s.push(r(5));
    expect(sunk).toEqual([2, 3]);
  });

  it('skips a slot settled twice and reserves nothing once ended', async () => {
    const s = new LiveStream({ onClose: () => undefined });
    const a = s.reserve()!;
    s.settle(a, r(1));
    s.settle(a, r(9));
    expect(n((await s.next()).value)).toBe(1);
    expect(s.queued).toBe(0);
    s.end();
    expect(s.reserve()).toBeUndefined();
  });
});
