/**
 * Stalled plain HTTP connections (issue 17, item 10, docs/reliability.md R10), over raw sockets:
 * a half-sent head or body is answered 408 and closed once the (here short) headers or request
 * timeout has passed; the N+1th TCP connection from one address is answered 429 and closed,
 * unless peers are trusted proxies; and the timeouts bound receiving a request only: a
 * graphql-ws socket and a keep-alive connection outlive them.
 */
import { connect, type Socket } from 'node:net';
import { loadHttpEdgeConfig } from '../../server/http/config';
import { ConfigError } from '../../adapters/contract/settings';
import { disposeAll, startGatewayFor, startNomad } from '../support/harness';
import { until } from '../support/until';
import { ackedClient, claim, eventOf, startWsGateway, stopAll, subscribed } from '../ws/helpers';

const HEADERS_TIMEOUT_MS = 500;
const REQUEST_TIMEOUT_MS = 1_000;
/** Generous: the machine is loaded. Without the timeouts Node holds a half-sent head 60 s and a body 300 s. */
const CLOSED_WITHIN_MS = 15_000;

interface Conn {
  socket: Socket;
  /** Everything received so far. */
  received(): string;
  /** Resolves with the ms from connect to close. */
  closed: Promise<number>;
}

function open(port: number): Promise<Conn> {
  return new Promise((resolve, reject) => {
    const start = Date.now();
    let got = '';
    const socket = connect(port, '127.0.0.1');
    const closed = new Promise<number>((r) => socket.once('close', () => r(Date.now() - start)));
    socket.on('data', (d: Buffer) => (got += d.toString()));
    socket.on('error', () => undefined);
    socket.once('connect', () => resolve({ socket, received: () => got, closed }));
    socket.once('error', reject);
  });
}

/** Rejects when the connection is still open after `ms`. */
async function closedWithin(c: Conn, ms: number): Promise<number> {
  let t: NodeJS.Timeout | undefined;
  const late = new Promise<never>(
    (_, reject) => (t = setTimeout(() => reject(new Error(`connection still open after ${ms} ms`)), ms)),
  );
  try {
    return await Promise.race([c.closed, late]);
  } finally {
    clearTimeout(t);
  }
}

const statusLine = (text: string): string => text.split('\r\n')[0] ?? '';

describe('stalled connections: headers and request timeouts', () => {
  let port: number;
  beforeAll(async () => {
    const sim = await startNomad();
    const gw = await startGatewayFor([{ id: 'east', url: sim.url }], {
      http: { headersTimeoutMs: HEADERS_TIMEOUT_MS, requestTimeoutMs: REQUEST_TIMEOUT_MS },
    });
    port = gw.gateway.port;
  });
  afterAll(disposeAll);

  it('should answer 408 and close a connection whose request head stops half-way', async () => {
    const c = await open(port);
    c.socket.write('POST /graphql HTTP/1.1\r\nHost: gw\r\ncontent-type: application/json\r\n');
    const ms = await closedWithin(c, CLOSED_WITHIN_MS);
    expect(statusLine(c.received())).toBe('HTTP/1.1 408 Request Timeout');
    expect(c.received()).toContain('"code":"REQUEST_TIMEOUT"');
    expect(ms).toBeGreaterThanOrEqual(HEADERS_TIMEOUT_MS - 50);
  }, 30_000);

  it('should close a head sent one byte at a time (slowloris) at the headers timeout, though bytes keep coming', async () => {
    const c = await open(port);
    const head = 'POST /graphql HTTP/1.1\r\nHost: gw\r\nx-padding: ' + 'a'.repeat(10_000);
    let i = 0;
    const drip = setInterval(() => !c.socket.destroyed && c.socket.write(head[i++ % head.length]!), 50);
    try {
      await closedWithin(c, CLOSED_WITHIN_MS);
    } finally {
      clearInterval(drip);
    }
    expect(statusLine(c.received())).toBe('HTTP/1.1 408 Request Timeout');
  }, 30_000);

  it('should answer 408 and close a connection whose body stops half-way', async () => {
    const c = await open(port);
    c.socket.write(
      'POST /graphql HTTP/1.1\r\nHost: gw\r\ncontent-type: application/json\r\ncontent-length: 100\r\n\r\n{"query":',
    );
    const ms = await closedWithin(c, CLOSED_WITHIN_MS);
    expect(statusLine(c.received())).toBe('HTTP/1.1 408 Request Timeout');
    expect(ms).toBeGreaterThanOrEqual(REQUEST_TIMEOUT_MS - 50);
  }, 30_000);

  it('should close a connection that never sends a byte', async () => {
    const c = await open(port);
    await closedWithin(c, CLOSED_WITHIN_MS);
  }, 30_000);

  it('should time each request of a keep-alive connection on its own: an idle pause longer than the timeouts is fine', async () => {
    const c = await open(port);
    const get = 'GET /healthz HTTP/1.1\r\nHost: gw\r\n\r\n';
    c.socket.write(get);
    await until(() => c.received().includes('\r\n\r\n'), 'the first answer');
    await new Promise((r) => setTimeout(r, REQUEST_TIMEOUT_MS * 2.5));
    expect(c.socket.destroyed).toBe(false);
    c.socket.write(get);
    await until(() => c.received().split('HTTP/1.1 200').length === 3, 'the second answer on the same connection');
    c.socket.destroy();
  }, 30_000);
});

describe('stalled connections: the timeouts never cut a graphql-ws socket', () => {
  afterAll(stopAll);

  it('should keep a subscription streaming past the request timeout', async () => {
    const gw = await startWsGateway({
      http: { headersTimeoutMs: HEADERS_TIMEOUT_MS, requestTimeoutMs: REQUEST_TIMEOUT_MS },
    });
    const c = await ackedClient(gw.wsUrl);
    await subscribed(c, 's1');
    await new Promise((r) => setTimeout(r, REQUEST_TIMEOUT_MS * 3));
    claim(gw.sim, ['vol-001']);
    expect((await eventOf(c, 's1', 'CLAIMED')).volumeId).toBeDefined();
    expect(c.ws.readyState).toBe(c.ws.OPEN);
    c.ws.close();
  }, 60_000);
});

describe('connections per address', () => {
  afterAll(disposeAll);
  const CAP = 3;

  it('should answer the N+1th connection from one address 429 TOO_MANY_CONNECTIONS and close it, and take a new one once one closes', async () => {
    const sim = await startNomad();
    const gw = await startGatewayFor([{ id: 'east', url: sim.url }], { http: { maxConnectionsPerAddress: CAP } });
    const held = await Promise.all(Array.from({ length: CAP }, () => open(gw.gateway.port)));
    const extra = await open(gw.gateway.port);
    await closedWithin(extra, CLOSED_WITHIN_MS);
    expect(statusLine(extra.received())).toBe('HTTP/1.1 429 Too Many Requests');
    expect(extra.received()).toContain('"code":"TOO_MANY_CONNECTIONS"');
    // The held ones still serve.
    held[0]!.socket.write('GET /healthz HTTP/1.1\r\nHost: gw\r\n\r\n');
    await until(() => held[0]!.received().startsWith('HTTP/1.1 200'), 'a held connection to be served');
    held[1]!.socket.destroy();
    await until(async () => {
      const next = await open(gw.gateway.port);
      next.socket.write('GET /healthz HTTP/1.1\r\nHost: gw\r\nconnection: close\r\n\r\n');
      await next.closed;
      return next.received().startsWith('HTTP/1.1 200');
    }, 'a connection to be taken once one has closed');
    for (const h of held) h.socket.destroy();
  }, 60_000);

  it('should not cap peers when they are trusted proxies (TRUST_PROXY_HOPS > 0)', async () => {
    const sim = await startNomad();
    const gw = await startGatewayFor([{ id: 'east', url: sim.url }], {
      http: { maxConnectionsPerAddress: CAP, trustProxyHops: 1 },
    });
    const conns = await Promise.all(Array.from({ length: CAP * 3 }, () => open(gw.gateway.port)));
    for (const c of conns) c.socket.write('GET /healthz HTTP/1.1\r\nHost: gw\r\n\r\n');
    await until(
      () => conns.every((c) => c.received().startsWith('HTTP/1.1 200')),
      `all ${CAP * 3} connections to be served`,
    );
    for (const c of conns) c.socket.destroy();
  }, 60_000);
});

describe('stalled connections: settings', () => {
  it('should default to a 10 s head, a 30 s request and 1,000 connections per address, and read the environment', () => {
    expect(loadHttpEdgeConfig({}, {})).toMatchObject({
      headersTimeoutMs: 10_000,
      requestTimeoutMs: 30_000,
      maxConnectionsPerAddress: 1000,
    });
    expect(
      loadHttpEdgeConfig(
        { HEADERS_TIMEOUT_MS: '5000', REQUEST_TIMEOUT_MS: '20000', MAX_CONNECTIONS_PER_ADDRESS: '2000' },
        {},
      ),
    ).toMatchObject({ headersTimeoutMs: 5000, requestTimeoutMs: 20_000, maxConnectionsPerAddress: 2000 });
    expect(loadHttpEdgeConfig({}, { http: { headersTimeoutMs: 60_000 } })).toMatchObject({
      headersTimeoutMs: 60_000,
      requestTimeoutMs: 60_000,
    });
    expect(() => loadHttpEdgeConfig({ HEADERS_TIMEOUT_MS: '20000', REQUEST_TIMEOUT_MS: '10000' }, {})).toThrow(
      ConfigError,
    );
    expect(() => loadHttpEdgeConfig({ MAX_CONNECTIONS_PER_ADDRESS: '0' }, {})).toThrow(/MAX_CONNECTIONS_PER_ADDRESS/);
  });
});
