/**
 * The hub's stream as graphql-ws iterates it, with two additions: the subscription's place is
 * given back exactly once when the stream ends (done, error, `return()`), and the hub's
 * SlowConsumerError closes the socket (4413) instead of becoming an `error` message.
 *
 * A hand-written iterator, not an `async function*`: graphql-ws calls `return()` while its
 * `for await` waits in `next()`, and a generator would queue that `return()` behind the pending
 * `next()`, i.e. until the next event, which may never come. This one passes `return()` straight
 * to the hub's stream.
 *
 * Shared results (`SerializedResult`) are written by the iterator itself through `sendShared`, as
 * the `next` frame graphql-ws would write, and not handed to graphql-ws: its emit path costs each
 * subscriber of an event an envelope `JSON.stringify`, a marker swap and several promise hops,
 * which at 10,000 subscribers is most of the fan-out. graphql-ws still owns the subscription:
 * it iterates, calls `return()` on `complete` or close, and sends `complete` when the stream is
 * done or `error` when it throws; results of a subscriber's own (errors) still go through it. Its
 * `for await` waits in `next()` while shared results flow, and it asks again only after it sent a
 * result it was handed, so the order of frames is the stream's.
 */
import { SerializedResult, type LiveResult } from '../../subscriptions/live/types';
import { isSlowConsumer } from './errors';

export interface StreamHooks {
  /** The stream is over (called once). */
  onEnd(): void;
  /** The hub dropped this subscriber as too slow. */
  onSlowConsumer(err: unknown): void;
  /** The hub's stream failed to end cleanly (logged; the subscription is over anyway). */
  onReturnError(err: unknown): void;
  /** Writes a shared result's `next` frame; without it shared results go to graphql-ws. */
  sendShared?(result: SerializedResult): void;
}

export function guardStream(inner: AsyncGenerator<LiveResult, void, void>, hooks: StreamHooks): AsyncGenerator<LiveResult, void, void> {
  let ended = false;
  const end = (): void => {
    if (ended) return;
    ended = true;
    hooks.onEnd();
  };
  const done: IteratorReturnResult<void> = { done: true, value: undefined };
  const it = {
    async next(): Promise<IteratorResult<LiveResult, void>> {
      if (ended) return done;
      try {
        for (;;) {
          const r = await inner.next();
          if (r.done) end();
          // Returned while waiting (client `complete`, socket closed): nothing more goes out.
          if (r.done || ended) return done;
          if (!hooks.sendShared || !(r.value instanceof SerializedResult)) return r;
          hooks.sendShared(r.value);
        }
      } catch (err) {
        end();
        if (!isSlowConsumer(err)) throw err;
        hooks.onSlowConsumer(err);
        return done;
      }
    },
    async return(): Promise<IteratorResult<LiveResult, void>> {
      end();
      try {
        await inner.return(undefined);
      } catch (err) {
        hooks.onReturnError(err);
      }
      return done;
    },
    async throw(err: unknown): Promise<IteratorResult<LiveResult, void>> {
      end();
      return inner.throw(err);
    },
    [Symbol.asyncIterator]() {
      return it;
    },
  };
  return it as unknown as AsyncGenerator<LiveResult, void, void>;
}
