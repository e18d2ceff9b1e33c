/**
 * The hub's stream as graphql-ws iterates it, with two additions: the subscription's place is
 * given back exactly once when the stream ends (done, error, `return()`), and the hub's
 * SlowConsumerError closes the socket (4413) instead of becoming an `error` message.
 *
 * A hand-written iterator, not an `async function*`: graphql-ws calls `return()` while its
 * `for await` waits in `next()`, and a generator would queue that `return()` behind the pending
 * `next()`, i.e. until the next event, which may never come. This one passes `return()` straight
 * to the hub's stream.
 */
import type { LiveResult } from '../../subscriptions/live/types';
import { isSlowConsumer } from './errors';

export interface StreamHooks {
  /** The stream is over (called once). */
  onEnd(): void;
  /** The hub dropped this subscriber as too slow. */
  onSlowConsumer(err: unknown): void;
  /** The hub's stream failed to end cleanly (logged; the subscription is over anyway). */
  onReturnError(err: unknown): void;
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
        const r = await inner.next();
        if (r.done) end();
        return r;
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
