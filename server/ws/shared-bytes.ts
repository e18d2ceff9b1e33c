/**
 * Shared bytes: a {@link SerializedResult} the hub serialized once is written as the payload of a
 * `next` message without serializing it again. Live streams' frames are built by {@link nextFrames}
 * and written by the stream guard (server/ws/stream.ts). A shared result that still reaches
 * graphql-ws's emit takes the marker path: graphql-ws builds every message itself
 * (`{"id":…,"type":"next","payload":…}` through `JSON.stringify` with our replacer), so the
 * socket's `onNext` hands it a {@link SharedMarker} in place of the payload, the replacer writes
 * the marker as a string, and the socket's `send` swaps that string for the shared bytes. The
 * marker holds a per-process random nonce and a slot of this socket, so nothing a client or a
 * backend writes can be mistaken for one. The UTF-8 bytes are encoded once per result, for every
 * socket that sends it.
 */
import { randomBytes } from 'node:crypto';
import type { SerializedResult } from '../../subscriptions/live/types';

const NONCE = `vg-shared-${randomBytes(12).toString('hex')}-`;
const PAYLOAD_KEY = '"payload":';
const CLOSE = Buffer.from('}');

/** Stands for a shared payload until `send` swaps it for the bytes. */
export class SharedMarker {
  constructor(readonly text: string) {}
}

/** graphql-ws's `jsonMessageReplacer`: a marker becomes its string. */
export function sharedReplacer(_key: string, value: unknown): unknown {
  return value instanceof SharedMarker ? value.text : value;
}

/** UTF-8 bytes of each result, encoded once whatever the number of sockets. */
const encoded = new WeakMap<SerializedResult, Buffer>();

function bytesOf(r: SerializedResult): Buffer {
  let b = encoded.get(r);
  if (!b) encoded.set(r, (b = Buffer.from(r.json, 'utf8')));
  return b;
}

/** One socket's results waiting between `onNext` and `send`. */
export class SharedPayloads {
  #slot = 0;
  /** Made on first use: live streams write their shared frames themselves, so most sockets never hold one. */
  #pending?: Map<number, SerializedResult>;

  /** What `onNext` returns in place of `result`. */
  hold(result: SerializedResult): SharedMarker {
    const slot = ++this.#slot;
    (this.#pending ??= new Map()).set(slot, result);
    return new SharedMarker(`${NONCE}${slot}`);
  }

  /** The frame to write for graphql-ws's message `data`: the shared bytes swapped in, or `data` as is. */
  frame(data: string): string | Buffer {
    // A held message ends with `"payload":"<nonce><slot>"}` (graphql-ws writes payload last).
    if (!this.#pending?.size || !data.endsWith('"}')) return data;
    const at = data.lastIndexOf(`"${NONCE}`);
    if (at < PAYLOAD_KEY.length || data.slice(at - PAYLOAD_KEY.length, at) !== PAYLOAD_KEY) return data;
    const slot = Number(data.slice(at + 1 + NONCE.length, -2));
    const result = this.#pending.get(slot);
    if (!result) return data;
    this.#pending.delete(slot);
    return Buffer.concat([Buffer.from(data.slice(0, at), 'utf8'), bytesOf(result), CLOSE]);
  }
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
