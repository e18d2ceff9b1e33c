/**
 * TEST FIXTURE, not the gateway's hub: a LiveHub (subscriptions/live/types.ts) whose events the
 * test publishes, for testing the socket layer (server/ws) until the real hub is wired in. It
 * executes each subscriber's document against the real schema with the published payload as the
 * root value, once per distinct (document, variables), serializes once and yields the same
 * SerializedResult to every subscriber of that group, as the real hub does. `counts()` tells
 * which streams are still open, so tests see iterators closed.
 */
import { execute, getOperationAST, type ExecutionArgs, type ExecutionResult } from 'graphql';
import { SerializedResult, type LiveHub, type LiveResult } from '../../subscriptions/live/types';

class FixtureStream {
  readonly #queue: Array<{ value?: LiveResult; error?: unknown }> = [];
  #waiting: { resolve(r: IteratorResult<LiveResult, void>): void; reject(e: unknown): void } | undefined;
  #done = false;

  constructor(
    readonly field: string,
    readonly args: ExecutionArgs,
    private readonly onEnd: () => void,
  ) {}

  push(item: { value?: LiveResult; error?: unknown }): void {
    if (this.#done) return;
    const w = this.#waiting;
    if (!w) return void this.#queue.push(item);
    this.#waiting = undefined;
    if (item.error !== undefined) {
      this.end();
      w.reject(item.error);
    } else w.resolve({ done: false, value: item.value! });
  }

  end(): void {
    if (this.#done) return;
    this.#done = true;
    this.onEnd();
    const w = this.#waiting;
    this.#waiting = undefined;
    w?.resolve({ done: true, value: undefined });
  }

  readonly iterator = {
    next: (): Promise<IteratorResult<LiveResult, void>> => {
      const item = this.#queue.shift();
      if (item?.error !== undefined) {
        this.end();
        return Promise.reject(item.error);
      }
      if (item) return Promise.resolve({ done: false, value: item.value! });
      if (this.#done) return Promise.resolve({ done: true, value: undefined });
      return new Promise((resolve, reject) => (this.#waiting = { resolve, reject }));
    },
    return: (): Promise<IteratorResult<LiveResult, void>> => {
      this.end();
      return Promise.resolve({ done: true, value: undefined });
    },
    throw: (e: unknown): Promise<IteratorResult<LiveResult, void>> => {
      this.end();
      return Promise.reject(e);
    },
    [Symbol.asyncIterator]() {
      return this;
    },
  };
}

export class FixtureLiveHub implements LiveHub {
  readonly #streams = new Set<FixtureStream>();
  /** Every `subscribe` call's args, in order. */
  readonly calls: ExecutionArgs[] = [];
  /** When set, `subscribe` answers this instead of a stream (e.g. CURSOR_EXPIRED). */
  startResult: ExecutionResult | undefined;
  closed = false;

  async subscribe(args: ExecutionArgs): Promise<AsyncGenerator<LiveResult, void, void> | ExecutionResult> {
    this.calls.push(args);
    if (this.startResult) return this.startResult;
    const field = rootField(args);
    const s: FixtureStream = new FixtureStream(field, args, () => this.#streams.delete(s));
    this.#streams.add(s);
    return s.iterator as unknown as AsyncGenerator<LiveResult, void, void>;
  }

  counts(): Record<string, number> {
    const out: Record<string, number> = {};
    for (const s of this.#streams) out[s.field] = (out[s.field] ?? 0) + 1;
    return out;
  }

  /** Open streams in all. */
  get open(): number {
    return this.#streams.size;
  }

  /** Executes once per distinct (document, variables) with `{ [field]: payload }` as root; returns the streams fed. */
  async publish(field: string, payload: unknown): Promise<number> {
    const groups = new Map<string, FixtureStream[]>();
    for (const s of this.#streams) {
      if (s.field !== field) continue;
      const key = `${s.args.document.loc?.source.body}\u0000${JSON.stringify(s.args.variableValues ?? {})}`;
      groups.set(key, [...(groups.get(key) ?? []), s]);
    }
    for (const streams of groups.values()) {
      const a = streams[0]!.args;
      // Per-event executions carry no subscription-start limits (see server/ws/index.ts).
      const result = await execute({ ...a, rootValue: { [field]: payload }, contextValue: { ...(a.contextValue as object), limits: undefined } });
      const shared = new SerializedResult(JSON.stringify(result));
      for (const s of streams) s.push({ value: shared });
    }
    return [...groups.values()].reduce((n, g) => n + g.length, 0);
  }

  /** Yields `result` as is (shared bytes or an ExecutionResult) to every stream of `field`. */
  publishRaw(field: string, result: LiveResult): number {
    let n = 0;
    for (const s of this.#streams) if (s.field === field) (s.push({ value: result }), n++);
    return n;
  }

  /** Every stream of `field` throws `err`. */
  fail(field: string, err: unknown): void {
    for (const s of [...this.#streams]) if (s.field === field) s.push({ error: err });
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const s of [...this.#streams]) s.end();
  }
}

function rootField(args: ExecutionArgs): string {
  const op = getOperationAST(args.document, args.operationName);
  const first = op?.selectionSet.selections[0];
  return first?.kind === 'Field' ? first.name.value : 'unknown';
}
