/** The socket layer's stream guard over the hub's stream: shared results written from the fan-out's own loop. */
import { GuardedStream, type StreamHooks } from '../../server/ws/stream';
import { LiveStream } from '../../subscriptions/live/stream';
import { SerializedResult } from '../../subscriptions/live/types';

const r = (n: number): SerializedResult => new SerializedResult(JSON.stringify({ data: { n } }));

function hooks(sent: SerializedResult[]): StreamHooks & { ended: number } {
  return {
    ended: 0,
    onEnd() {
      this.ended++;
    },
    onSlowConsumer: () => undefined,
    onReturnError: () => undefined,
    sendShared: (x) => void sent.push(x),
  };
}

describe('GuardedStream over a LiveStream', () => {
  it('writes a shared result synchronously when its slot settles while graphql-ws waits in next()', async () => {
    const inner = new LiveStream({ onClose: () => undefined });
    const sent: SerializedResult[] = [];
    const g = new GuardedStream(inner, hooks(sent));
    let returned: IteratorResult<unknown> | undefined;
    void g.next().then((x) => (returned = x));
    const slots = [inner.reserve()!, inner.reserve()!];
    inner.settle(slots[0]!, r(1));
    // Written in the settling call itself: no promise or microtask per subscriber.
    expect(sent.map((x) => x.json)).toEqual([r(1).json]);
    inner.settle(slots[1]!, r(2));
    expect(sent).toHaveLength(2);
    // A subscriber's own result goes back to graphql-ws (which sends it), after the shared ones.
    const own = { errors: [{ message: 'own' }] };
    inner.push(own as never);
    await new Promise((res) => setImmediate(res));
    expect(returned?.value).toBe(own);
  });

  it('writes nothing once returned, and ends once', async () => {
    const inner = new LiveStream({ onClose: () => undefined });
    const sent: SerializedResult[] = [];
    const h = hooks(sent);
    const g = new GuardedStream(inner, h);
    const waiting = g.next();
    await g.return();
    expect((await waiting).done).toBe(true);
    inner.push(r(1));
    expect(sent).toHaveLength(0);
    expect(h.ended).toBe(1);
  });
});
