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
 * subscriber of an event an envelope `JSON.stringify` and several promise hops,
 * which at 10,000 subscribers is most of the fan-out. graphql-ws still owns the subscription:
 * it iterates, calls `return()` on `complete` or close, and sends `complete` when the stream is
 * done or `error` when it throws; results of a subscriber's own (errors) still go through it. Its
 * `for await` waits in `next()` while shared results flow, and it asks again only after it sent a
 * result it was handed, so the order of frames is the stream's. A stream that can (the hub's) is
 * given the hooks as its sink: while this waits in the stream's `next()`, shared results are
 * written from the fan-out's own loop, without a promise or microtask per subscriber.
 */
import { SerializedResult, type LiveResult, type SharedResultStream } from '../../subscriptions/live/types';
import { isSlowConsumer } from './errors';

export interface StreamHooks {
  /** The stream is over (called once). */
  onEnd(): void;
  /** The hub dropped this subscriber as too slow. */
  onSlowConsumer(err: unknown): void;
  /** The hub's stream failed to end cleanly (logged; the subscription is over anyway). */
  onReturnError(err: unknown): void;
  /** Writes a shared result's `next` frame. */
  sendShared(result: SerializedResult): void;
}

const DONE: IteratorReturnResult<void> = Object.freeze({ done: true, value: undefined });

/**
 * The guarded stream. A class, not a closure-built object: each of thousands of subscriptions then
 * holds two fields instead of five closures and their scope.
 */
export class GuardedStream implements AsyncIterableIterator<LiveResult, void, void> {
  #ended = false;

  constructor(
    private readonly inner: AsyncGenerator<LiveResult, void, void>,
    private readonly hooks: StreamHooks,
  ) {
    if (typeof (inner as Partial<SharedResultStream>).shareTo === 'function')
      (inner as unknown as SharedResultStream).shareTo(hooks);
  }

  async next(): Promise<IteratorResult<LiveResult, void>> {
    if (this.#ended) return DONE;
    try {
      for (;;) {
        const r = await this.inner.next();
        if (r.done) this.#end();
        // Returned while waiting (client `complete`, socket closed): nothing more goes out.
        if (r.done || this.#ended) return DONE;
        if (!(r.value instanceof SerializedResult)) return r;
        this.hooks.sendShared(r.value);
      }
    } catch (err) {
      this.#end();
      if (!isSlowConsumer(err)) throw err;
      this.hooks.onSlowConsumer(err);
      return DONE;
    }
  }

  async return(): Promise<IteratorResult<LiveResult, void>> {
    this.#end();
    try {
      await this.inner.return(undefined);
    } catch (err) {
      this.hooks.onReturnError(err);
    }
    return DONE;
  }

  async throw(err: unknown): Promise<IteratorResult<LiveResult, void>> {
    this.#end();
    return this.inner.throw(err);
  }

  [Symbol.asyncIterator](): this {
    return this;
  }

  #end(): void {
    if (this.#ended) return;
    this.#ended = true;
    this.hooks.onEnd();
  }
}
