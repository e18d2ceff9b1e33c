/**
 * A loopback server that asks the GraphiQL handler first and forwards everything else to a
 * running gateway: the tests compose the route the way server/app.ts does, without app.ts.
 */
import { createServer, request, type IncomingMessage, type Server } from 'node:http';
import type { Duplex } from 'node:stream';
import type { AddressInfo } from 'node:net';
import type { GraphiQLHandler } from '../../server/graphiql';

export interface Front {
  origin: string;
  port: number;
  close(): Promise<void>;
}

/** Called for WebSocket upgrades; without it they are refused, as the gateway refuses them today. */
export type UpgradeHandler = (req: IncomingMessage, socket: Duplex, head: Buffer) => void;

export async function startFront(
  handler: GraphiQLHandler,
  upstreamPort: number,
  onUpgrade?: UpgradeHandler,
): Promise<Front> {
  const server: Server = createServer((req, res) => {
    if (handler(req, res, new URL(req.url ?? '/', 'http://front.invalid'))) return;
    const up = request(
      { host: '127.0.0.1', port: upstreamPort, method: req.method, path: req.url, headers: req.headers },
      (r) => {
        res.writeHead(r.statusCode ?? 502, r.headers);
        r.pipe(res);
      },
    );
    up.on('error', () => res.destroy());
    req.pipe(up);
  });
  if (onUpgrade) server.on('upgrade', onUpgrade);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    origin: `http://127.0.0.1:${port}`,
    port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
