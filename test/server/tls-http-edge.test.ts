/**
 * The HTTP edge's rules (timeouts, body limit, connections per address) over HTTPS with client
 * certificates, against an in-process gateway; the certificates are made by `openssl` here
 * (tls-helpers.ts).
 */
import { connect as connectTcp } from 'node:net';
import { connect, type TLSSocket } from 'node:tls';
import { startGateway, type RunningGateway } from '../../server/app';
import { createRegistry } from '../../server/backends';
import { loadConfig } from '../../server/config';
import { createLogger } from '../../server/logger';
import { until } from '../support/until';
import { at, BACKENDS, makeCertificates, pem, post, removeCertificates } from './tls-helpers';

beforeAll(makeCertificates);
afterAll(removeCertificates);

describe("the HTTP edge's rules over HTTPS", () => {
  /** Long enough to open a few connections on a loaded machine before it cuts idle ones. */
  const HEADERS_TIMEOUT_MS = 3_000;
  /** Generous; Node's own bound on a handshake is 120 s. */
  const CLOSED_WITHIN_MS = 20_000;
  let gateway: RunningGateway;
  let port: number;
  beforeAll(async () => {
    gateway = await startGateway({
      config: {
        port: 0,
        host: '127.0.0.1',
        maxConcurrentReads: 4,
        maxBodyBytes: 4_096,
        tls: { certFile: at('server-1.crt'), keyFile: at('server-1.key'), clientCaFile: at('ca.crt') },
        http: {
          headersTimeoutMs: HEADERS_TIMEOUT_MS,
          requestTimeoutMs: HEADERS_TIMEOUT_MS,
          maxConnectionsPerAddress: 3,
        },
      },
      registry: createRegistry(loadConfig({ GATEWAY_BACKENDS: 'lab=memory' }).backends),
      logger: createLogger('silent'),
      readinessProbe: false,
      live: false,
    });
    port = gateway.port;
  });
  afterAll(() => gateway.stop());
  /** A client the gateway admits. */
  const client = (): { ca: Buffer; cert: Buffer; key: Buffer } => ({
    ca: pem('ca.crt'),
    cert: pem('client.crt'),
    key: pem('client.key'),
  });
  const openConnections = (): Promise<number> =>
    new Promise((resolve, reject) => gateway.server.getConnections((err, n) => (err ? reject(err) : resolve(n))));

  /** Resolves with the ms until `socket` closes; rejects past CLOSED_WITHIN_MS. */
  const closeTime = (socket: { once(e: 'close', f: () => void): unknown; destroy(): void }): Promise<number> => {
    const start = Date.now();
    return new Promise((resolve, reject) => {
      const late = setTimeout(
        () => (socket.destroy(), reject(new Error(`still open after ${CLOSED_WITHIN_MS} ms`))),
        CLOSED_WITHIN_MS,
      );
      socket.once('close', () => (clearTimeout(late), resolve(Date.now() - start)));
    });
  };

  it('should close a connection that never starts its TLS handshake, as a stalled head', async () => {
    const socket = connectTcp(port, '127.0.0.1');
    socket.on('error', () => undefined);
    expect(await closeTime(socket)).toBeGreaterThanOrEqual(HEADERS_TIMEOUT_MS - 100);
  });

  it('should answer 408 over TLS to a request head that stops half-way', async () => {
    let got = '';
    const socket = connect({ host: '127.0.0.1', port, servername: 'localhost', ...client() }, () =>
      socket.write('POST /graphql HTTP/1.1\r\nHost: localhost\r\n'),
    );
    socket.on('data', (d: Buffer) => (got += d.toString()));
    socket.on('error', () => undefined);
    await closeTime(socket);
    expect(got.split('\r\n')[0]).toBe('HTTP/1.1 408 Request Timeout');
  });

  it('should close its side of a connection whose client certificate it refused', async () => {
    await until(async () => (await openConnections()) === 0, 'no connection open');
    await expect(post(gateway.url, BACKENDS, { ca: pem('ca.crt') })).rejects.toMatchObject({
      code: 'ERR_SSL_TLSV13_ALERT_CERTIFICATE_REQUIRED',
    });
    await until(async () => (await openConnections()) === 0, 'the refused connection to close', 10_000);
  });

  it('should answer 413 to a body over MAX_BODY_BYTES', async () => {
    const a = await post(gateway.url, `{ __typename }${' '.repeat(5_000)}`, client());
    expect(a.status).toBe(413);
  });

  it('should refuse a connection over MAX_CONNECTIONS_PER_ADDRESS before its handshake', async () => {
    const open = (): Promise<TLSSocket> =>
      new Promise((resolve, reject) => {
        const socket = connect({ host: '127.0.0.1', port, servername: 'localhost', ...client() }, () =>
          resolve(socket),
        );
        socket.on('error', reject);
        socket.once('close', () => reject(new Error('closed before the handshake')));
      });
    await until(async () => (await openConnections()) === 0, 'no connection open');
    const held = await Promise.all([open(), open(), open()]);
    try {
      await expect(open()).rejects.toThrow();
    } finally {
      for (const s of held) s.destroy();
    }
  });
});
