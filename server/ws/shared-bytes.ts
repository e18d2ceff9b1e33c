/**
 * Shared bytes: a {@link SerializedResult} the hub serialized once is written as the payload of a
 * `next` message without serializing it again. Every live stream's shared results are written by
 * the stream guard (server/ws/stream.ts) through {@link NextFrames}, never handed to graphql-ws's
 * emit. The UTF-8 bytes are encoded once per result, for every socket that sends it, and for every
 * SSE or multipart stream, which queues them as they are (server/streams/).
 */
import type { SerializedResult } from '../../subscriptions/live/types';

/** UTF-8 bytes of each result, encoded once whatever the number of sockets. */
const encoded = new WeakMap<SerializedResult, Buffer>();

export function bytesOf(r: SerializedResult): Buffer {
  let b = encoded.get(r);
  if (!b) encoded.set(r, (b = Buffer.from(r.json, 'utf8')));
  return b;
}

/**
 * The `next` frames of one subscription for shared results, byte for byte what graphql-ws writes
 * (`JSON.stringify({ id, type: 'next', payload })`, keys in that order), with the payload's bytes
 * shared: the live transport writes these itself instead of a trip through graphql-ws's emit
 * (server/ws/stream.ts). The subscription keeps only the short prefix text; each frame is one
 * buffer (one copy of the payload bytes, no JSON work).
 */
export class NextFrames {
  readonly #prefix: string;
  readonly #prefixBytes: number;

  constructor(id: string) {
    this.#prefix = `{"id":${JSON.stringify(id)},"type":"next","payload":`;
    this.#prefixBytes = Buffer.byteLength(this.#prefix, 'utf8');
  }

  frame(result: SerializedResult): Buffer {
    const payload = bytesOf(result);
    const frame = Buffer.allocUnsafe(this.#prefixBytes + payload.length + 1);
    frame.write(this.#prefix, 0, 'utf8');
    payload.copy(frame, this.#prefixBytes);
    frame[frame.length - 1] = 0x7d; // }
    return frame;
  }
}
