/**
 * Checks on an HTTP upgrade request before it becomes a WebSocket: the path, the browser's
 * Origin, and the number of open sockets per client address and in all. A refusal is an HTTP
 * answer with a GraphQL error body (as the HTTP edge answers), sent before any upgrade.
 */
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { addressBucket, clientAddress } from '../http/caller-identity';
import { ORIGIN_NOT_ALLOWED, ORIGIN_REFUSAL_MESSAGE, type OriginRule } from '../http/origin';
import { UpgradeRefusal } from './errors';

export interface UpgradeGateOptions {
  /** The only path served (`/graphql`). */
  path: string;
  /** Which browser origins may open a socket: the rule every transport applies (server/http/origin.ts). */
  origins: OriginRule;
  maxConnectionsPerAddress: number;
  maxConnections: number;
  /** See `HttpEdgeConfig.trustProxyHops`. */
  trustProxyHops: number;
}

/** A socket's place in the counts; `release()` once it closes (idempotent). */
export interface Admission {
  /** The client address (after `trustProxyHops`). */
  address: string;
  release(): void;
}

export class UpgradeGate {
  readonly #perAddress = new Map<string, number>();
  #total = 0;
  #closed = false;

  constructor(private readonly o: UpgradeGateOptions) {}

  /** Open sockets now. */
  get open(): number {
    return this.#total;
  }

  /** From now on every upgrade is refused with 503 (shutdown). */
  close(): void {
    this.#closed = true;
  }

  /** @throws UpgradeRefusal saying why the request may not become a socket */
  admit(req: IncomingMessage, url: URL): Admission {
    if (url.pathname !== this.o.path)
      throw new UpgradeRefusal(404, 'NOT_FOUND', `no WebSocket endpoint here; graphql-ws is served at ${this.o.path}`);
    if (this.#closed)
      throw new UpgradeRefusal(
        503,
        'SHUTTING_DOWN',
        'the gateway is shutting down: connect again (to another replica)',
      );
    const origin = typeof req.headers.origin === 'string' ? req.headers.origin : undefined;
    if (!this.o.origins.allows(origin, req.headers.host))
      throw new UpgradeRefusal(403, ORIGIN_NOT_ALLOWED, ORIGIN_REFUSAL_MESSAGE);
    const address = clientAddress(req.headers, req.socket.remoteAddress, this.o.trustProxyHops);
    const key = addressBucket(address);
    const mine = this.#perAddress.get(key) ?? 0;
    if (mine >= this.o.maxConnectionsPerAddress)
      throw new UpgradeRefusal(
        429,
        'TOO_MANY_CONNECTIONS',
        `this client address has ${mine} sockets open, the most allowed (WS_MAX_CONNECTIONS_PER_ADDRESS)`,
      );
    if (this.#total >= this.o.maxConnections)
      throw new UpgradeRefusal(
        503,
        'TOO_MANY_CONNECTIONS',
        'the gateway has as many sockets open as it serves (WS_MAX_CONNECTIONS): try again later',
      );
    this.#perAddress.set(key, mine + 1);
    this.#total++;
    let released = false;
    return {
      address,
      release: () => {
        if (released) return;
        released = true;
        this.#total--;
        const n = (this.#perAddress.get(key) ?? 1) - 1;
        if (n <= 0) this.#perAddress.delete(key);
        else this.#perAddress.set(key, n);
      },
    };
  }
}

const STATUS_TEXT: Record<UpgradeRefusal['status'], string> = {
  403: 'Forbidden',
  404: 'Not Found',
  429: 'Too Many Requests',
  503: 'Service Unavailable',
};

/** Answers a refused upgrade on the raw socket and closes it. */
export function refuseUpgrade(socket: Duplex, r: UpgradeRefusal): void {
  const body = JSON.stringify({ errors: [{ message: r.message, extensions: { code: r.code } }] });
  const retry = r.status === 429 || (r.status === 503 && r.code === 'TOO_MANY_CONNECTIONS') ? 'Retry-After: 5\r\n' : '';
  socket.end(
    `HTTP/1.1 ${r.status} ${STATUS_TEXT[r.status]}\r\nConnection: close\r\nContent-Type: application/json; charset=utf-8\r\n${retry}Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
  );
  // A client that never reads its answer must not hold the socket.
  setTimeout(() => socket.destroy(), 1000).unref();
}
