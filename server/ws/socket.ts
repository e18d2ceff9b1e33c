/**
 * One WebSocket as graphql-ws's server sees it (its `Socket`): sends that never wait for the
 * network, with the outgoing queue bounded (past `maxBufferedBytes` the socket is closed as a slow
 * consumer, so one stalled reader costs its own queue and nobody else's time), closes that are
 * cut if the peer does not answer, and incoming messages handed on with errors contained.
 */
import type { Context as TraceContext } from '@opentelemetry/api';
import { MessageType, type WebSocket as Socket } from 'graphql-ws';
import WebSocket from 'ws';
import type { Logger } from '../logger';
import type { SocketCaller } from './connection-init';
import { closeReason, WsCloseCode } from './errors';
import type { SocketQuota } from './quotas';

/** How long a closing socket may take to answer the close frame before it is cut. */
const CLOSE_WAIT_MS = 2_000;

/** graphql-ws message types only servers send: a client sending one breaks the protocol (4400). */
const SERVER_TYPES = new Set<string>([MessageType.ConnectionAck, MessageType.Next, MessageType.Error]);

/** Everything the transport keeps about one socket (graphql-ws's `extra`). */
export interface SocketState {
  /** Names the socket in logs; unique within the process. */
  readonly id: number;
  readonly ws: WebSocket;
  /** The client address (after `trustProxyHops`). */
  readonly address: string;
  /** The upgrade request's credential headers, when it had any; dropped once `connection_init` made `caller`. */
  upgradeCredentials?: Readonly<Record<string, string>>;
  /** Set once `connection_init` was accepted. */
  caller?: SocketCaller;
  quota?: SocketQuota;
  /** Per subscription still starting: aborts its start's signal if it ends first. */
  readonly active: Map<string, AbortController>;
  /** Answered the last ping. */
  alive: boolean;
  /** The code the gateway closed it with, when it did. */
  closeCode?: number;
  /** The upgrade's trace context (`traceparent`): every operation's span on the socket is its child (server/tracing). */
  readonly trace?: TraceContext;
}

export interface SocketHooks {
  maxBufferedBytes: number;
  logger: Logger;
  /** A message could not be sent (the socket was closing). */
  onDropped(): void;
}

let lastId = 0;

/**
 * The upgrade request is not kept: its headers were checked on upgrade (its credential headers
 * are kept apart until `connection_init`), and it weighed ~2 KiB a socket. The id is a counter: a UUID would be a ~250-byte string rope per socket for log lines.
 */
export function newSocketState(ws: WebSocket, address: string, trace?: TraceContext): SocketState {
  return { id: ++lastId, ws, address, active: new Map(), alive: true, trace };
}

/** Closes with `code`; a peer that does not answer within CLOSE_WAIT_MS is cut. The first close wins. */
export function closeSocket(s: SocketState, code: number, reason: string): void {
  if (s.closeCode !== undefined || s.ws.readyState === WebSocket.CLOSED) return;
  s.closeCode = code;
  s.ws.close(code, closeReason(reason));
  setTimeout(() => s.ws.terminate(), CLOSE_WAIT_MS).unref();
}

/**
 * Writes one text frame (graphql-ws's messages and the transport's own `next` frames alike): never
 * waits for the network, drops it when the socket is closing, and closes a socket whose queue
 * passed `maxBufferedBytes` (the bound is the queue, not the stream's pace).
 */
export function writeFrame(s: SocketState, h: SocketHooks, frame: string | Buffer): void {
  if (s.ws.readyState !== WebSocket.OPEN || s.closeCode !== undefined) return void h.onDropped();
  s.ws.send(frame, { binary: false });
  if (s.ws.bufferedAmount > h.maxBufferedBytes) {
    h.logger.info({ socket: s.id, bufferedBytes: s.ws.bufferedAmount, max: h.maxBufferedBytes }, 'websocket closed: slow consumer');
    closeSocket(s, WsCloseCode.SlowConsumer, `Slow consumer: more than ${h.maxBufferedBytes} bytes queued`);
  }
}

/** The graphql-ws `Socket` over `s.ws`. */
export function graphqlWsSocket(s: SocketState, h: SocketHooks): Socket {
  return {
    protocol: s.ws.protocol,
    send(data) {
      writeFrame(s, h, data);
    },
    close(code, reason) {
      closeSocket(s, code ?? 1000, reason ?? '');
    },
    onMessage(cb) {
      s.ws.on('message', (raw: WebSocket.RawData) => {
        const data = String(raw);
        cb(data).catch((err: unknown) => {
          // graphql-ws throws on a well-formed message of a type only servers send.
          if (SERVER_TYPES.has(typeOf(data))) return closeSocket(s, WsCloseCode.BadRequest, `Invalid message received: ${typeOf(data)} is sent by servers only`);
          h.logger.error({ err, socket: s.id }, 'graphql-ws message handling failed');
          closeSocket(s, WsCloseCode.InternalServerError, 'Internal server error');
        });
      });
    },
  };
}

function typeOf(data: string): string {
  try {
    const m = JSON.parse(data) as { type?: unknown };
    return typeof m?.type === 'string' ? m.type : '';
  } catch {
    return '';
  }
}
