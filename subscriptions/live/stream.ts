/**
 * One subscription's outgoing stream: results in the order their slots were reserved (a slot may
 * wait for an access check or an execution while later slots are ready; the stream holds those
 * back), bounded, and ended by `return()` at any moment, also while the consumer awaits `next()`
 * (an async generator function would wait for its next yield, so this is a plain iterator).
 *
 * Fan-out writes an event to thousands of streams at once, so the per-subscriber path is kept
 * synchronous where order allows: slots of one execution are reserved here and settled by the
 * fan-out in one loop when it is done ({@link LiveStream.reserve}, {@link LiveStream.settle}), and
 * a consumer that registered a {@link SharedSink} is handed shared results straight away while it
 * waits in `next()`, with no promise, microtask or iterator result per subscriber.
 */
import { SlowConsumerError } from '../../adapters/contract/errors';
import { SerializedResult, type LiveResult, type SharedSink } from './types';

/** What a slot resolves to: a result, nothing (filtered out or denied), or the end of the stream. */
export type SlotValue = LiveResult | null | { end: true; last?: LiveResult };

/** A reserved place in a stream's order (from {@link LiveStream.reserve}); opaque to its holder. */
export interface Slot {
  settled: boolean;
  value: SlotValue;
}

/** Most results waiting for a consumer unless told (the `live.maxQueued` setting's default). */
export const DEFAULT_MAX_QUEUED = 1000;

/** Options of {@link LiveStream}. */
export interface LiveStreamOptions {
  /** Most results waiting for the consumer (reserved slots included). @default {@link DEFAULT_MAX_QUEUED} (1000) */
  maxQueued?: number;
  /** Called once when the stream ends for any reason (return, end, overflow): unsubscribe here. */
  onClose: () => void;
  /** Called when the bound is passed, before the stream throws `SlowConsumerError`. */
  onOverflow?: () => void;
}

export class LiveStream implements AsyncGenerator<LiveResult, void, void> {
  readonly #slots: Slot[] = [];
  readonly #ready: LiveResult[] = [];
  #waiter: { resolve: (r: IteratorResult<LiveResult, void>) => void; reject: (e: unknown) => void } | null = null;
  /** Set once no more results will be queued; `last` is yielded after the queue. */
  #ending: { last?: LiveResult } | null = null;
  #failure: Error | null = null;
  #closed = false;
  #released = false;
  #sink: SharedSink | null = null;
  readonly #max: number;
  readonly #o: LiveStreamOptions;

  constructor(o: LiveStreamOptions) {
    this.#o = o;
    this.#max = o.maxQueued ?? DEFAULT_MAX_QUEUED;
  }

  /** True once the stream has ended (nothing more is delivered). */
  get closed(): boolean {
    return this.#closed;
  }

  /** Results and reserved slots not yet taken by the consumer. */
  get queued(): number {
    return this.#ready.length + this.#slots.length;
  }

  /** Queues a value or reserves a slot for one that is still being made; order is reservation order. */
  push(v: SlotValue | Promise<SlotValue>): void {
    const slot = this.reserve();
    if (!slot) return;
    if (!(v instanceof Promise)) return this.settle(slot, v);
    v.then(
      (value) => this.settle(slot, value),
      // Producers settle with values; a rejection here is a bug, so the slot is skipped.
      () => this.settle(slot, null),
    );
  }

  /**
   * Reserves the next place in the stream's order, to be filled by {@link settle}; undefined when
   * the stream takes nothing more (ended, or just dropped as a slow consumer).
   */
  reserve(): Slot | undefined {
    if (this.#closed || this.#ending) return undefined;
    if (this.queued >= this.#max) return void this.#overflow();
    const slot: Slot = { settled: false, value: null };
    this.#slots.push(slot);
    return slot;
  }

  /** Fills a slot {@link reserve} gave (once); what is settled at the head goes out in order. */
  settle(slot: Slot, value: SlotValue): void {
    if (slot.settled) return;
    slot.settled = true;
    slot.value = value;
    this.#flush();
  }

  /**
   * Hands shared results to `sink` synchronously while the consumer waits in `next()` with nothing
   * queued before them (so the order stays the stream's); anything else still goes through `next()`.
   */
  shareTo(sink: SharedSink): void {
    this.#sink = sink;
  }

  /** Ends the stream after what is queued, optionally with a last result (an error result). */
  end(last?: LiveResult): void {
    this.push({ end: true, last });
  }

  next(): Promise<IteratorResult<LiveResult, void>> {
    if (this.#failure) {
      const f = this.#failure;
      this.#failure = null;
      this.#finish();
      return Promise.reject(f);
    }
    const r = this.#ready.shift();
    if (r !== undefined) return Promise.resolve({ value: r, done: false });
    if (this.#closed || this.#ending) return this.#done();
    return new Promise((resolve, reject) => (this.#waiter = { resolve, reject }));
  }

  /** Ends the subscription and frees everything, even while `next()` is pending. */
  return(): Promise<IteratorResult<LiveResult, void>> {
    this.#finish();
    return Promise.resolve({ value: undefined, done: true });
  }

  throw(e?: unknown): Promise<IteratorResult<LiveResult, void>> {
    this.#finish();
    return Promise.reject(e instanceof Error ? e : new Error(String(e)));
  }

  [Symbol.asyncIterator](): this {
    return this;
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.return();
  }

  #overflow(): void {
    this.#o.onOverflow?.();
    this.#slots.length = 0;
    this.#ready.length = 0;
    const err = new SlowConsumerError(this.#max);
    if (this.#waiter) {
      const w = this.#waiter;
      this.#waiter = null;
      this.#finish();
      w.reject(err);
    } else {
      this.#failure = err;
      this.#ending = {};
      // Unsubscribe now; the consumer learns of the overflow on its next `next()`.
      this.#release();
    }
  }

  /** Moves settled slots at the head into the ready queue, in order. */
  #flush(): void {
    while (this.#slots.length > 0 && this.#slots[0]!.settled) {
      const { value } = this.#slots.shift()!;
      if (value === null) continue;
      if ('end' in value) {
        if (value.last) this.#ready.push(value.last);
        this.#ending = {};
        this.#slots.length = 0;
        break;
      }
      // The consumer is parked in next() and everything before this went out: write it now.
      if (this.#sink && this.#waiter && this.#ready.length === 0 && value instanceof SerializedResult)
        this.#sink.sendShared(value);
      else this.#ready.push(value);
    }
    if (this.#waiter && (this.#ready.length > 0 || this.#ending)) {
      const w = this.#waiter;
      this.#waiter = null;
      // Straight to the waiting consumer: a hop through next()'s promise per result costs every
      // subscriber of an event two more microtasks.
      if (this.#ready.length > 0) w.resolve({ value: this.#ready.shift()!, done: false });
      else void this.next().then(w.resolve, w.reject);
    }
  }

  #done(): Promise<IteratorResult<LiveResult, void>> {
    this.#finish();
    return Promise.resolve({ value: undefined, done: true });
  }

  #finish(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#slots.length = 0;
    this.#ready.length = 0;
    const w = this.#waiter;
    this.#waiter = null;
    this.#sink = null;
    w?.resolve({ value: undefined, done: true });
    this.#release();
  }

  #release(): void {
    if (this.#released) return;
    this.#released = true;
    this.#o.onClose();
  }
}
