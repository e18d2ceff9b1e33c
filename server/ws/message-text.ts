/** The text of an incoming WebSocket message, whatever form `ws` hands it in. */
import type WebSocket from 'ws';

/**
 * Decodes a `ws` message as UTF-8. With `ws`'s default `binaryType` (`nodebuffer`) a message is
 * one Buffer; a message as fragments or as an ArrayBuffer is decoded alike (`String()` would
 * give `[object ArrayBuffer]` or comma-joined fragments).
 */
export function messageText(raw: WebSocket.RawData): string {
  if (Buffer.isBuffer(raw)) return raw.toString('utf8');
  return (Array.isArray(raw) ? Buffer.concat(raw) : Buffer.from(raw)).toString('utf8');
}
