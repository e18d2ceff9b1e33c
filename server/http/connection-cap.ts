/**
 * A cap on the TCP connections one peer address holds open (plain HTTP and graphql-ws alike),
 * so one address cannot take the process's file descriptors. The peer is the TCP peer (IPv6 by
 * its /64, as the other per-address limits): `X-Forwarded-For` cannot be read before a request
 * arrives, and a connection that never sends one is exactly what is being bounded. Behind
 * trusted proxies every peer is a proxy carrying many clients, so the cap is not applied there.
 */
import type { Server } from 'node:http';
import type { Socket } from 'node:net';
import { addressBucket } from './caller-identity';
import { EdgeError, EdgeErrorCode } from './errors';

export interface ConnectionCapOptions {
  /** Open connections per peer address; the next one is answered 429 and closed. */
  maxPerAddress: number;
  /** Every peer is a trusted proxy (`TRUST_PROXY_HOPS` > 0): no cap. */
  peersAreTrustedProxies: boolean;
  /** Told of each refused connection (metrics). */
  onRefused?: (err: EdgeError) => void;
}

/** Longest a refused connection is kept for its answer to go out. */
const REFUSAL_LINGER_MS = 1_000;

/** Connections open per peer address, once the cap is installed. */
export interface ConnectionCap {
  open(address: string): number;
}

/**
 * Installs the cap in front of node:http's own `connection` listener, so a refused socket never
 * reaches the HTTP parser (it is answered and closed before any of its bytes are read).
 */
export function capConnectionsPerAddress(server: Server, o: ConnectionCapOptions): ConnectionCap {
  const open = new Map<string, number>();
  const cap: ConnectionCap = { open: (address) => open.get(addressBucket(address)) ?? 0 };
  if (o.peersAreTrustedProxies) return cap;
  const httpListeners = server.listeners('connection') as Array<(socket: Socket) => void>;
  server.removeAllListeners('connection');
  server.on('connection', (socket: Socket) => {
    if (socket.remoteAddress === undefined) return void socket.destroy();
    const key = addressBucket(socket.remoteAddress);
    const n = open.get(key) ?? 0;
    if (n >= o.maxPerAddress) return refuse(socket, n, o.onRefused);
    open.set(key, n + 1);
    socket.once('close', () => {
      const left = (open.get(key) ?? 1) - 1;
      if (left <= 0) open.delete(key);
      else open.set(key, left);
    });
    for (const listener of httpListeners) listener.call(server, socket);
  });
  return cap;
}

function refuse(socket: Socket, n: number, onRefused?: (err: EdgeError) => void): void {
  const e = new EdgeError(
    EdgeErrorCode.TooManyConnections,
    429,
    `this client address has ${n} connections open, the most allowed (MAX_CONNECTIONS_PER_ADDRESS)`,
    {},
    { 'retry-after': '5' },
  );
  onRefused?.(e);
  const body = JSON.stringify(e.toBody());
  // Whatever the client sends is discarded; the answer goes out, then the socket is closed.
  socket.on('error', () => socket.destroy());
  socket.resume();
  socket.end(
    `HTTP/1.1 429 Too Many Requests\r\ncontent-type: application/json; charset=utf-8\r\ncontent-length: ${Buffer.byteLength(body)}\r\nretry-after: 5\r\nconnection: close\r\n\r\n${body}`,
  );
  setTimeout(() => socket.destroy(), REFUSAL_LINGER_MS).unref();
}
