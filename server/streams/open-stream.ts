/**
 * One subscription's HTTP response while it streams: writes that never wait for the network,
 * with the response's queue bounded (past `maxBufferedBytes` the response is cut as a slow
 * consumer, as a socket is at WS_MAX_BUFFERED_BYTES) and counted in its address's budget once it
 * is tracked there (server/ws/queue-budget.ts), heartbeats, and one end whatever ends it first
 * (the hub's stream, the client, the shutdown, the budget).
 */
import type { ServerResponse } from 'node:http';
import type { TrackedQueue } from '../ws/queue-budget';
import type { StreamProtocol } from './protocol';

export class OpenStream {
  #ended = false;
  #heartbeat: NodeJS.Timeout | undefined;
  /** A check of the queue against its bound is due at this turn's end. */
  #checkDue = false;
  /** Its queue in its address's budget (`WS_MAX_BUFFERED_BYTES_PER_ADDRESS`), once the subscription streams. */
  queue: TrackedQueue | undefined;

  constructor(
    readonly res: ServerResponse,
    readonly protocol: StreamProtocol,
    private readonly maxBufferedBytes: number,
    /** Told when the response was cut for its queue. */
    private readonly onSlowConsumer: (queuedBytes: number) => void,
  ) {
    res.once('close', () => this.#stop());
  }

  /** Whether nothing more goes out (ended by us, or the client went away). */
  get ended(): boolean {
    return this.#ended || this.res.destroyed || this.res.closed;
  }

  /** Sends the headers and the protocol's opening, and starts the heartbeats. */
  open(): void {
    this.res.writeHead(200, this.protocol.headers);
    this.res.socket?.setNoDelay(true);
    this.write(this.protocol.opening);
    this.#heartbeat = setInterval(() => this.write(this.protocol.heartbeat), this.protocol.heartbeatMs);
    this.#heartbeat.unref();
  }

  /**
   * Queues `chunk`, counted in its address's budget; cuts the response if its queue is still past
   * the bound at the end of this turn of the event loop. Not at once: Node holds a response's
   * writes until the turn's ticks are done (the socket is corked), so within a turn the queue
   * counts what a reader that keeps up takes a moment later, and a burst larger than the bound
   * (one big event, many events at once) would cut it.
   */
  write(chunk: string): void {
    if (this.ended) return;
    this.res.write(chunk);
    const queued = this.res.writableLength;
    this.queue?.wrote(queued);
    if (queued > this.maxBufferedBytes && !this.#checkDue) {
      this.#checkDue = true;
      setImmediate(() => this.#checkQueue());
    }
  }

  /** Queues `bytes` between the protocol's `around`, the bytes themselves shared (not copied). */
  writeAround(bytes: Buffer): void {
    if (this.ended) return;
    this.res.write(this.protocol.around[0]);
    this.res.write(bytes);
    this.write(this.protocol.around[1]);
  }

  /** Writes `last` and ends the response (once). */
  end(last: string): void {
    if (this.ended) return;
    this.#stop();
    this.res.end(last);
  }

  /** Ends without a word: the client sees a broken stream (and retries). */
  cut(): void {
    this.#stop();
    this.res.destroy();
  }

  #checkQueue(): void {
    this.#checkDue = false;
    const queued = this.res.writableLength;
    if (this.ended || queued <= this.maxBufferedBytes) return;
    this.onSlowConsumer(queued);
    this.cut();
  }

  #stop(): void {
    this.#ended = true;
    clearInterval(this.#heartbeat);
    this.queue?.untrack();
  }
}
