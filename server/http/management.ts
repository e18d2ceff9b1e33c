/**
 * The management port (`MANAGEMENT_PORT`): `/healthz`, `/readyz` and `/metrics` over plain HTTP
 * on a port of their own, so probes and Prometheus reach them when the main port asks every
 * client for a certificate (mTLS). Same answers as on the main port (one listener), same edge
 * rules (one server factory); nothing else is served there.
 */
import type { RequestListener, Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { HttpEdgeConfig } from './config';
import type { EdgeError } from './errors';
import { sendJson } from './respond';
import { createHttpServer, drainHttpServer } from './server';

/** The paths served on the management port. */
export const MANAGEMENT_PATHS: readonly string[] = ['/healthz', '/readyz', '/metrics'];

/** How long open scrapes may take to finish when the gateway stops. */
const MANAGEMENT_DRAIN_MS = 1_000;

/** The gateway's listener, narrowed to {@link MANAGEMENT_PATHS}; anything else is 404. */
export function managementListener(listener: RequestListener): RequestListener {
  return (req, res) => {
    const path = new URL(req.url ?? '/', 'http://gateway.invalid').pathname;
    if (MANAGEMENT_PATHS.includes(path)) return listener(req, res);
    sendJson(res, 404, { error: 'not found', routes: MANAGEMENT_PATHS });
  };
}

/** A listening management server. */
export interface ManagementServer {
  port: number;
  server: Server;
  /** Stops accepting and lets open requests finish (briefly). */
  close(): Promise<void>;
}

/** Starts the management server on `host`:`port` (plain HTTP). @param listener the gateway's request listener */
export async function listenManagement(
  listener: RequestListener,
  http: HttpEdgeConfig,
  onRefused: (err: EdgeError) => void,
  host: string,
  port: number,
): Promise<ManagementServer> {
  const server = createHttpServer(managementListener(listener), http, onRefused);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  return {
    port: (server.address() as AddressInfo).port,
    server,
    close: () => drainHttpServer(server, MANAGEMENT_DRAIN_MS),
  };
}
