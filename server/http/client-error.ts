/**
 * JSON answers for requests Node rejects before any handler runs (`server.on('clientError')`):
 * a request head over `maxHeaderSize` (431), a malformed request (`HPE_*` parse errors, 400),
 * a head or body that did not arrive in time (408). The socket is closed after the answer: its
 * byte stream can no longer be trusted. Over HTTPS a failed TLS handshake (a timeout, a refused
 * client certificate) arrives here too; there is no HTTP to answer it with, so it is closed.
 */
import type { Socket } from 'node:net';
import { EdgeError, EdgeErrorCode } from './errors';

const REASONS: Record<number, string> = {
  400: 'Bad Request',
  408: 'Request Timeout',
  431: 'Request Header Fields Too Large',
};

/** The edge error for a client error's code. */
export function clientErrorFor(code: string | undefined, maxHeaderBytes: number): EdgeError {
  if (code === 'HPE_HEADER_OVERFLOW')
    return new EdgeError(EdgeErrorCode.HeadersTooLarge, 431, `request headers exceed ${maxHeaderBytes} bytes`, {
      maxHeaderBytes,
    });
  if (code === 'ERR_HTTP_REQUEST_TIMEOUT' || code === 'ERR_HTTP_HEADERS_TIMEOUT')
    return new EdgeError(EdgeErrorCode.RequestTimeout, 408, 'the request did not arrive in time');
  return new EdgeError(EdgeErrorCode.BadRequest, 400, 'malformed HTTP request');
}

/** A TLS handshake's failure (Node's `ERR_TLS_*`, OpenSSL's `ERR_SSL_*`). */
const isTlsHandshakeError = (err: NodeJS.ErrnoException): boolean =>
  typeof err.code === 'string' && (err.code.startsWith('ERR_TLS_') || err.code.startsWith('ERR_SSL_'));

/** The `clientError` listener. */
export function answerClientError(
  maxHeaderBytes: number,
  onRefused?: (err: EdgeError) => void,
): (err: NodeJS.ErrnoException, socket: Socket) => void {
  return (err, socket) => {
    // Reset, already answered, or no TLS session to speak HTTP in: nothing to say, nobody to say it to.
    if (
      err.code === 'ECONNRESET' ||
      isTlsHandshakeError(err) ||
      !socket.writable ||
      (socket as Socket & { _httpMessage?: { headersSent?: boolean } })._httpMessage?.headersSent
    ) {
      socket.destroy();
      return;
    }
    const e = clientErrorFor(err.code, maxHeaderBytes);
    onRefused?.(e);
    const body = JSON.stringify(e.toBody());
    socket.end(
      `HTTP/1.1 ${e.status} ${REASONS[e.status] ?? 'Bad Request'}\r\ncontent-type: application/json; charset=utf-8\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`,
    );
  };
}
