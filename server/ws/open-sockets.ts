/**
 * The transport's open sockets: the keep-alive that cuts a socket which missed its pong, the
 * queued bytes `/metrics` reads across them, and closing them all at shutdown.
 */
import WebSocket from 'ws';
import type { Logger } from '../logger';
import { WsCloseCode } from './errors';
import { closeSocket, type SocketState } from './socket';

export class OpenSockets {
  readonly #all = new Set<SocketState>();
  readonly #keepAlive: NodeJS.Timeout | undefined;

  /** @param keepAliveMs interval of pings in ms, 0 = off (`WS_KEEPALIVE_MS`) */
  constructor(keepAliveMs: number, logger: Logger) {
    this.#keepAlive =
      keepAliveMs > 0
        ? setInterval(() => {
            for (const s of this.#all) {
              if (!s.alive) {
                logger.debug({ socket: s.id }, 'websocket cut: no pong');
                s.closeCode ??= 1006;
                s.ws.terminate();
                continue;
              }
              s.alive = false;
              if (s.ws.readyState === WebSocket.OPEN) s.ws.ping();
            }
          }, keepAliveMs)
        : undefined;
    this.#keepAlive?.unref();
  }

  get size(): number {
    return this.#all.size;
  }

  add(s: SocketState): void {
    this.#all.add(s);
  }

  delete(s: SocketState): void {
    this.#all.delete(s);
  }

  /** The largest and the total outgoing queue, in bytes. */
  queueBytes(): { max: number; sum: number } {
    let max = 0;
    let sum = 0;
    for (const s of this.#all) {
      max = Math.max(max, s.ws.bufferedAmount);
      sum += s.ws.bufferedAmount;
    }
    return { max, sum };
  }

  /**
   * Stops the keep-alive, closes every socket with 1012 (service restart: resume elsewhere from
   * your cursor) and resolves once all are closed; those still open after `waitMs` are cut.
   */
  async closeAll(waitMs: number): Promise<void> {
    if (this.#keepAlive) clearInterval(this.#keepAlive);
    const all = [...this.#all];
    const gone = Promise.all(
      all
        .filter((s) => s.ws.readyState !== WebSocket.CLOSED)
        .map((s) => new Promise<void>((r) => s.ws.once('close', () => r()))),
    );
    for (const s of all)
      closeSocket(s, WsCloseCode.ServiceRestart, 'Service restart: reconnect and resume from your last cursor');
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([gone, new Promise<void>((r) => (timer = setTimeout(r, waitMs)))]);
    clearTimeout(timer);
    for (const s of this.#all) s.ws.terminate();
    await gone;
  }
}
