/**
 * Reading a request body with a size limit. An oversized body gets a 413 JSON answer, not a
 * connection reset: the rest of the body is read and thrown away (so the client, still
 * uploading, reads the answer instead of a TCP reset), up to {@link DRAIN_FACTOR} times the limit;
 * past that the connection is closed after the answer. A `Content-Length` over the limit is
 * refused before anything is read, and `Expect: 100-continue` requests are refused before the
 * client sends the body (see {@link refuseEarly}).
 */
import type { IncomingMessage } from 'node:http';
import { EdgeError, EdgeErrorCode } from './errors';

/** How much of an oversized body, as a multiple of the limit, is drained to keep the connection usable. */
export const DRAIN_FACTOR = 8;

/** 413; `close` when the connection cannot be reused (the body was not drained). */
export class BodyTooLargeError extends EdgeError {
  constructor(
    limit: number,
    readonly close: boolean,
  ) {
    super(
      EdgeErrorCode.PayloadTooLarge,
      413,
      `request body exceeds ${limit} bytes`,
      { maxBodyBytes: limit },
      close ? { connection: 'close' } : {},
    );
  }
}

const declaredLength = (req: IncomingMessage): number | undefined => {
  const v = req.headers['content-length'];
  return v !== undefined && /^\d+$/.test(v) ? Number(v) : undefined;
};

/** The 413 for a request whose `Content-Length` is already over `limit`, or undefined. */
export function refuseEarly(req: IncomingMessage, limit: number): BodyTooLargeError | undefined {
  const length = declaredLength(req);
  if (length === undefined || length <= limit) return undefined;
  // A client waiting for `100 Continue` has sent nothing: close instead of draining.
  const waiting = /100-continue/i.test(String(req.headers.expect ?? ''));
  return new BodyTooLargeError(limit, waiting || length > limit * DRAIN_FACTOR);
}

/**
 * Drains what is left of `req` in the background (see the module comment); destroys the socket
 * once more than `cap` bytes have come.
 */
export function drain(req: IncomingMessage, cap: number): void {
  let seen = 0;
  req.on('data', (c: Buffer) => {
    seen += c.length;
    if (seen > cap) req.socket.destroy();
  });
  req.on('error', () => undefined);
  req.resume();
}

/** The body as UTF-8 text. @throws BodyTooLargeError once the body is over `limit` and drained (or too big to drain) */
export function readBody(req: IncomingMessage, limit: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let over = false;
    const cap = limit * DRAIN_FACTOR;
    const onData = (c: Buffer): void => {
      size += c.length;
      if (size > cap) {
        req.off('data', onData);
        // Keep discarding until the answer is out; `connection: close` ends the socket after it.
        drain(req, Number.POSITIVE_INFINITY);
        reject(new BodyTooLargeError(limit, true));
        return;
      }
      if (size > limit) {
        over = true;
        chunks.length = 0;
        return;
      }
      if (!over) chunks.push(c);
    };
    req.on('data', onData);
    req.on('end', () =>
      over ? reject(new BodyTooLargeError(limit, false)) : resolve(Buffer.concat(chunks).toString('utf8')),
    );
    // A client that hangs up or breaks the framing mid-body is not a gateway failure to log.
    req.on('error', () => reject(new EdgeError(EdgeErrorCode.BadRequest, 400, 'the request body could not be read')));
  });
}
