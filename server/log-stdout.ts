/**
 * The gateway's log destination on stdout, which never holds the process (issue 27, item 5):
 * a stalled reader (a wedged log shipper, a paused pipe) must neither grow memory without bound
 * nor keep the gateway from exiting. pino's own destination does the first with `maxLength`, but
 * flushes synchronously at exit, retrying until the reader reads again: a SIGTERM with a paused
 * reader left the gateway running 40 s and more, its shutdown backstop never firing.
 *
 * Here the lines of one turn of the event loop are written together at its end, with a
 * non-blocking `write(2)`: when stdout is a pipe, taking `process.stdout` makes Node set
 * O_NONBLOCK on it (a file or a terminal takes writes as it always does). What the reader does
 * not take waits, up to `maxBufferBytes`, and is retried on a timer; lines beyond are dropped and
 * counted. At exit, {@link StdoutLog.close} writes what stdout
 * takes at once and counts the rest as dropped; server/main.ts waits a bounded time for the
 * pending lines first and writes one line on stderr with the count.
 */
import { writeSync } from 'node:fs';

/** Pause between two tries to write while stdout takes nothing, ms. */
const RETRY_MS = 50;
/** Most bytes handed to one `write(2)`. */
const CHUNK_BYTES = 65_536;

/** Lines dropped, for the one line at exit. */
export interface DroppedLines {
  /** While running, because `maxBufferBytes` were already waiting (also counted by `onDrop`). */
  whileRunning: number;
  /** At exit, because stdout still did not take them. */
  atExit: number;
}

const wouldBlock = (err: unknown): boolean =>
  (err as NodeJS.ErrnoException).code === 'EAGAIN' || (err as NodeJS.ErrnoException).code === 'EWOULDBLOCK';

export class StdoutLog {
  /** Lines waiting, oldest first, from `#head`; the first may be partly written already (`#offset` bytes). */
  #lines: string[] = [];
  #head = 0;
  #offset = 0;
  /** Characters waiting (the bound counts characters, as pino's did: bytes for ASCII lines). */
  #waiting = 0;
  /** The next try: this turn's end (setImmediate), or a pause while stdout takes nothing. */
  #retry: NodeJS.Timeout | NodeJS.Immediate | undefined;
  #dropped = 0;
  /** Set once stdout refused a write for good (EPIPE: nobody will read): every later line is dropped. */
  #broken = false;
  #closed: DroppedLines | undefined;
  #idle: Array<() => void> = [];

  /**
   * @param maxBufferBytes most characters of lines waiting for stdout
   * @param onDrop told of each line dropped while running
   * @param fd the descriptor written. @default 1 (stdout)
   */
  constructor(
    private readonly maxBufferBytes: number,
    private readonly onDrop: () => void,
    private readonly fd = 1,
  ) {
    if (fd === 1) {
      // A pipe becomes non-blocking once Node opens its stdout stream: a write then never waits.
      // Its reader gone, the console's lines (the ready banner) are lost, as the log's are: no crash.
      process.stdout.on('error', (err: NodeJS.ErrnoException) => {
        if (err.code !== 'EPIPE') throw err;
      });
    }
  }

  /** pino's destination interface: takes one serialized line; it is written before the next turn of the event loop, with the others of this turn. */
  write(line: string): boolean {
    if (this.#closed || this.#broken || this.#waiting + line.length > this.maxBufferBytes) {
      this.#drop();
      return true;
    }
    this.#lines.push(line);
    this.#waiting += line.length;
    this.#retry ??= setImmediate(() => this.#tryAgain()).unref();
    return true;
  }

  /** Lines not yet (wholly) written. */
  get pending(): number {
    return this.#lines.length - this.#head;
  }

  /** Resolves once every waiting line is written, or after `timeoutMs`, whichever comes first. */
  flush(timeoutMs: number): Promise<void> {
    if (this.pending === 0) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(done, timeoutMs);
      function done(): void {
        clearTimeout(timer);
        resolve();
      }
      this.#idle.push(done);
    });
  }

  /**
   * From now on nothing is kept: writes what stdout takes at once, counts what is left as dropped
   * at exit, and answers the counts (the same every call).
   */
  close(): DroppedLines {
    if (this.#closed) return this.#closed;
    clearTimeout(this.#retry as NodeJS.Timeout);
    clearImmediate(this.#retry as NodeJS.Immediate);
    if (!this.#broken) this.#drain();
    this.#closed = { whileRunning: this.#dropped, atExit: this.pending };
    this.#lines = [];
    this.#head = 0;
    for (const done of this.#idle.splice(0)) done();
    return this.#closed;
  }

  #drop(): void {
    this.#dropped++;
    if (!this.#closed) this.onDrop();
  }

  #tryAgain(): void {
    this.#retry = undefined;
    if (this.#closed) return;
    this.#drain();
    if (this.pending > 0 && !this.#broken) this.#retry = setTimeout(() => this.#tryAgain(), RETRY_MS).unref();
    else for (const done of this.#idle.splice(0)) done();
  }

  /** Writes waiting lines until stdout takes no more (or refuses for good). */
  #drain(): void {
    while (this.#head < this.#lines.length) {
      // A chunk of whole lines from the first waiting one, without what of it was written.
      let end = this.#head;
      let text = '';
      while (end < this.#lines.length && (end === this.#head || text.length + this.#lines[end]!.length <= CHUNK_BYTES))
        text += this.#lines[end++]!;
      const buf = Buffer.from(text).subarray(this.#offset);
      let n: number;
      try {
        n = writeSync(this.fd, buf);
      } catch (err) {
        if (!wouldBlock(err)) this.#break();
        return;
      }
      this.#advance(n + this.#offset, end);
      if (n < buf.length) return;
    }
  }

  /** `bytes` of the lines from the head up to `end` are written: whole ones leave the queue, a part stays as the offset. */
  #advance(bytes: number, end: number): void {
    let left = bytes;
    while (this.#head < end) {
      const size = Buffer.byteLength(this.#lines[this.#head]!);
      if (left < size) break;
      left -= size;
      this.#waiting -= this.#lines[this.#head]!.length;
      this.#head++;
    }
    this.#offset = left;
    // Compact now and then, not at every line.
    if (this.#head === this.#lines.length) [this.#lines, this.#head] = [[], 0];
    else if (this.#head > 1024 && this.#head * 2 > this.#lines.length)
      [this.#lines, this.#head] = [this.#lines.slice(this.#head), 0];
  }

  /** Stdout is gone for good: what waits can never be written. */
  #break(): void {
    this.#broken = true;
    for (let i = this.#head; i < this.#lines.length; i++) this.#drop();
    this.#lines = [];
    this.#head = 0;
    this.#waiting = 0;
    for (const done of this.#idle.splice(0)) done();
  }
}

/** The one line on stderr at exit when log lines were dropped; none when none were. */
export function droppedLinesNotice(d: DroppedLines): string | undefined {
  if (d.whileRunning + d.atExit === 0) return undefined;
  return `volume-gateway: ${d.whileRunning + d.atExit} log lines were dropped because stdout did not take them (${d.whileRunning} while running, counted in gateway_log_lines_dropped_total; ${d.atExit} at exit)\n`;
}

/** Writes {@link droppedLinesNotice} on stderr, if any, without ever waiting: a stderr that takes nothing loses it. */
export function reportDroppedLines(d: DroppedLines): void {
  const notice = droppedLinesNotice(d);
  if (!notice) return;
  // Non-blocking if a pipe, as stdout.
  void process.stderr;
  try {
    writeSync(2, notice);
  } catch {
    // Nowhere left to say it.
  }
}
