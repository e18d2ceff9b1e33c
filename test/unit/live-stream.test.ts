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
});
