/**
 * The gateway's Node HTTP server: the edge's bounds on receiving a request (header size, head and
 * request timeouts, connections per address), `Expect: 100-continue` and malformed requests
 * answered by the edge, and the shutdown drain.
 */
import { createServer, type RequestListener, type Server } from 'node:http';
import { createServer as createHttpsServer, type ServerOptions as HttpsServerOptions } from 'node:https';
import { answerClientError } from './client-error';
import type { HttpEdgeConfig } from './config';
import { capConnectionsPerAddress } from './connection-cap';
import type { EdgeError } from './errors';

/** Idle keep-alive connections are kept longer than a load balancer's usual 60 s, so the balancer closes them first. */
const KEEP_ALIVE_TIMEOUT_MS = 65_000;

/**
 * The server, not yet listening: HTTPS when `tls` is given (server/http/tls.ts), under the same rules.
 * @param onRefused told of each request or connection the edge refuses (metrics)
 */
export function createHttpServer(
  listener: RequestListener,
  http: HttpEdgeConfig,
  onRefused: (err: EdgeError) => void,
  tls?: HttpsServerOptions,
): Server {
  const options = {
    maxHeaderSize: http.maxHeaderBytes,
    // Bound receiving a request only: Node resets these once a request has arrived, and an
    // upgraded socket leaves the HTTP parser, so responses and graphql-ws sockets are never cut.
    headersTimeout: http.headersTimeoutMs,
    requestTimeout: http.requestTimeoutMs,
    // How often Node looks for expired requests (its default, 30 s, would add up to 30 s to each).
    connectionsCheckingInterval: Math.max(50, Math.min(1_000, Math.floor(http.headersTimeoutMs / 4))),
  };
  // The head's timer starts after the handshake: a handshake gets the same bound (Node's default is 120 s).
  const server = tls
    ? createHttpsServer({ ...options, ...tls, handshakeTimeout: http.headersTimeoutMs }, listener)
    : createServer(options, listener);
  capConnectionsPerAddress(server, {
    maxPerAddress: http.maxConnectionsPerAddress,
    peersAreTrustedProxies: http.trustProxyHops > 0,
    onRefused,
  });
  // Answer `Expect: 100-continue` ourselves: an oversized body is refused before it is sent.
  server.on('checkContinue', listener);
  server.on('clientError', answerClientError(http.maxHeaderBytes, onRefused));
  server.keepAliveTimeout = KEEP_ALIVE_TIMEOUT_MS;
  return server;
}

/**
 * Stops accepting and lets in-flight requests finish. Keep-alive sockets turn idle only after
 * their response, so idle ones are closed repeatedly until the server is done, and whatever is
 * left after `graceMs` is cut.
 */
export async function drainHttpServer(server: Server, graceMs: number): Promise<void> {
  await new Promise<void>((resolve) => {
    const sweep = setInterval(() => server.closeIdleConnections(), 50);
    const cut = setTimeout(() => server.closeAllConnections(), graceMs);
    server.close(() => {
      clearInterval(sweep);
      clearTimeout(cut);
      resolve();
    });
    server.closeIdleConnections();
  });
}
