/**
 * Issue 31, part 5: load balancers probe with HEAD. `HEAD /healthz` and `HEAD /readyz` answer as GET
 * does (status and headers) with no body, on the main port and on the management port. Read off the
 * socket, so a body sent after the head would show.
 */
import { connect } from 'node:net';
import { startGateway, type RunningGateway } from '../../server/app';
import { createRegistry } from '../../server/backends';
import { loadConfig } from '../../server/config';
import { createLogger } from '../../server/logger';

/** One request on its own connection (closed by the server after the answer): the status, the headers but `date`, and the bytes after the head. */
function exchange(
  origin: string,
  method: string,
  path: string,
): Promise<{ status: number; headers: string[]; body: string }> {
  const { hostname, port } = new URL(origin);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () =>
      socket.write(`${method} ${path} HTTP/1.1\r\nHost: gateway\r\nConnection: close\r\n\r\n`),
    );
    let raw = '';
    socket.on('data', (d: Buffer) => (raw += d.toString('latin1')));
    socket.on('error', reject);
    socket.on('close', () => {
      const end = raw.indexOf('\r\n\r\n');
      const [statusLine, ...lines] = raw.slice(0, end).split('\r\n');
      resolve({
        status: Number(statusLine!.split(' ')[1]),
        headers: lines.filter((l) => !/^date:/i.test(l)).sort(),
        body: raw.slice(end + 4),
      });
    });
  });
}

let gateway: RunningGateway;

beforeAll(async () => {
  gateway = await startGateway({
    config: { port: 0, host: '127.0.0.1', maxConcurrentReads: 16, maxBodyBytes: 1_048_576, managementPort: 0 },
    registry: createRegistry(loadConfig({ GATEWAY_BACKENDS: 'lab=memory' }).backends),
    logger: createLogger('silent'),
    // No probe and no live hub: /readyz's body stays the same from one request to the next, so
    // the two answers' Content-Length can be compared too.
    readinessProbe: false,
    live: false,
  });
});
afterAll(() => gateway.stop());

describe('HEAD on the probes', () => {
  const origins = (): Array<[string, string]> => [
    ['main port', new URL(gateway.url).origin],
    ['management port', gateway.managementUrl!],
  ];

  it('should answer HEAD /healthz and HEAD /readyz with the status and headers of GET, and no body', async () => {
    for (const [where, origin] of origins())
      for (const path of ['/healthz', '/readyz']) {
        const get = await exchange(origin, 'GET', path);
        const head = await exchange(origin, 'HEAD', path);
        expect({ where, path, status: get.status, hasBody: get.body.length > 0 }).toEqual({
          where,
          path,
          status: 200,
          hasBody: true,
        });
        expect({ where, path, status: head.status, headers: head.headers, body: head.body }).toEqual({
          where,
          path,
          status: get.status,
          headers: get.headers,
          body: '',
        });
      }
  });

  it('should answer HEAD /readyz 503 while draining, as GET does', async () => {
    gateway.drain();
    for (const [, origin] of origins()) {
      const get = await exchange(origin, 'GET', '/readyz');
      const head = await exchange(origin, 'HEAD', '/readyz');
      expect(get.status).toBe(503);
      expect({ status: head.status, headers: head.headers, body: head.body }).toEqual({
        status: 503,
        headers: get.headers,
        body: '',
      });
    }
  });
});
