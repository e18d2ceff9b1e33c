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
import type { SlowConsumerCutReason } from '../metrics';
import type { SocketCaller } from './connection-init';
import { closeReason, WsCloseCode } from './errors';
import { messageText } from './message-text';
import type { OutgoingQueue, TrackedQueue } from './queue-budget';
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
  /** Its outgoing queue in its address's budget (`WS_MAX_BUFFERED_BYTES_PER_ADDRESS`) until it closes. */
  queue?: TrackedQueue;
}

export interface SocketHooks {
  maxBufferedBytes: number;
  logger: Logger;
  /** A message could not be sent (the socket was closing). */
  onDropped(): void;
  /** The socket was closed as a slow consumer, for `reason`. */
  onCut(reason: SlowConsumerCutReason): void;
}

let lastId = 0;

/**
 * The upgrade request is not kept: its headers were checked on upgrade (its credential headers
 * are kept apart until `connection_init`), and it weighed ~2 KiB a socket. The id is a counter: a UUID would be a ~250-byte string rope per socket for log lines.
 */
export function newSocketState(ws: WebSocket, address: string, trace?: TraceContext): SocketState {
  // `queue` is filled in at once (it needs the state): declared here so the shape stays the same.
  return { id: ++lastId, ws, address, active: new Map(), alive: true, trace, queue: undefined };
}

/** Closes with `code`; a peer that does not answer within CLOSE_WAIT_MS is cut. The first close wins. */
export function closeSocket(s: SocketState, code: number, reason: string): void {
  if (s.closeCode !== undefined || s.ws.readyState === WebSocket.CLOSED) return;
  s.closeCode = code;
  // Nothing more is queued on a closing socket; what is queued still counts until it is closed (CLOSE_WAIT_MS at most).
  s.queue?.closing();
  s.ws.close(code, closeReason(reason));
  setTimeout(() => s.ws.terminate(), CLOSE_WAIT_MS).unref();
}

/**
 * Writes one text frame (graphql-ws's messages and the transport's own `next` frames alike): never
 * waits for the network, drops it when the socket is closing, and closes a socket whose queue
 * passed `maxBufferedBytes` (the bound is the queue, not the stream's pace). Its address's budget
 * counts the queue first (and may close the address's largest socket or stream).
 */
export function writeFrame(s: SocketState, h: SocketHooks, frame: string | Buffer): void {
  if (s.ws.readyState !== WebSocket.OPEN || s.closeCode !== undefined) return void h.onDropped();
  s.ws.send(frame, { binary: false });
  const queued = s.ws.bufferedAmount;
  s.queue?.wrote(queued);
  if (queued > h.maxBufferedBytes) cutSlowConsumer(s, h, 'queue');
}

const SLOW_CONSUMER_REASONS: Record<SlowConsumerCutReason, (h: SocketHooks) => string> = {
  queue: (h) => `Slow consumer: more than ${h.maxBufferedBytes} bytes queued`,
  address: () => "Slow consumer: this client address's sockets and streams have too many bytes queued",
  hub: () => 'Slow consumer: the live hub dropped this subscriber',
};

/** Closes `s` with 4413 for `reason`, logged and counted once. */
export function cutSlowConsumer(s: SocketState, h: SocketHooks, reason: SlowConsumerCutReason): void {
  if (s.closeCode !== undefined || s.ws.readyState === WebSocket.CLOSED) return;
  h.logger.info(
    { socket: s.id, bufferedBytes: s.ws.bufferedAmount, reason, max: h.maxBufferedBytes },
    'websocket closed: slow consumer',
  );
  h.onCut(reason);
  closeSocket(s, WsCloseCode.SlowConsumer, SLOW_CONSUMER_REASONS[reason](h));
}

/** A socket's outgoing queue as its address's budget sees it (server/ws/queue-budget.ts). */
export class SocketQueue implements OutgoingQueue {
  readonly transport = 'ws';

  constructor(
    private readonly s: SocketState,
    private readonly h: SocketHooks,
  ) {}

  queuedBytes(): number {
    return this.s.ws.bufferedAmount;
  }

  cut(reason: SlowConsumerCutReason): void {
    cutSlowConsumer(this.s, this.h, reason);
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
        const data = messageText(raw);
        cb(data).catch((err: unknown) => {
          // graphql-ws throws on a well-formed message of a type only servers send.
          if (SERVER_TYPES.has(typeOf(data)))
            return closeSocket(
              s,
              WsCloseCode.BadRequest,
              `Invalid message received: ${typeOf(data)} is sent by servers only`,
            );
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
