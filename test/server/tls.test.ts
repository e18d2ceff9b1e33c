/**
 * TLS and mTLS end to end: certificates made by `openssl` here (a CA, a server certificate for
 * 127.0.0.1/localhost, a client certificate from that CA, and one from another CA), the gateway
 * run as `server/main.ts` in a child process over a memory backend, and real HTTPS and WSS
 * clients. SIGHUP after the files are replaced gives new connections the new certificate while
 * an open keep-alive connection keeps its own; unusable files keep the old certificate. The HTTP
 * edge's rules (timeouts, body limit, connections per address) hold over HTTPS as well.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { request, Agent, type RequestOptions } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect, type TLSSocket } from 'node:tls';
import WebSocket from 'ws';
import { connect as connectTcp } from 'node:net';
import { startGateway, type RunningGateway } from '../../server/app';
import { createRegistry } from '../../server/backends';
import { loadConfig } from '../../server/config';
import { ConfigError } from '../../adapters/contract/settings';
import { createLogger } from '../../server/logger';
import { until } from '../support/until';
import { messageText } from '../../server/ws/message-text';

const root = join(__dirname, '..', '..');
const dir = mkdtempSync(join(tmpdir(), 'gateway-tls-'));
const at = (name: string): string => join(dir, name);
const pem = (name: string): Buffer => readFileSync(at(name));

const openssl = (args: string[]): void => void execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' });
const EC = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];

function makeCa(name: string): void {
  openssl([
    'req',
    '-x509',
    ...EC,
    '-keyout',
    `${name}.key`,
    '-out',
    `${name}.crt`,
    '-days',
    '2',
    '-subj',
    `/CN=${name}`,
  ]);
}

/** A certificate signed by `ca` with this serial (hex) and these X.509v3 extensions. */
function makeCert(name: string, ca: string, serial: string, extensions: string): void {
  openssl(['req', ...EC, '-keyout', `${name}.key`, '-out', `${name}.csr`, '-subj', `/CN=${name}`]);
  writeFileSync(at(`${name}.ext`), extensions);
  openssl([
    'x509',
    '-req',
    '-in',
    `${name}.csr`,
    '-CA',
    `${ca}.crt`,
    '-CAkey',
    `${ca}.key`,
    '-set_serial',
    `0x${serial}`,
    '-days',
    '2',
    '-out',
    `${name}.crt`,
    '-extfile',
    `${name}.ext`,
  ]);
}

const SERVER_EXT = 'subjectAltName=DNS:localhost,IP:127.0.0.1\nextendedKeyUsage=serverAuth\n';
const CLIENT_EXT = 'extendedKeyUsage=clientAuth\n';

beforeAll(() => {
  makeCa('ca');
  makeCa('other-ca');
  makeCert('server-1', 'ca', '1001', SERVER_EXT);
  makeCert('server-2', 'ca', '2002', SERVER_EXT);
  makeCert('client', 'ca', '3003', CLIENT_EXT);
  makeCert('stranger', 'other-ca', '4004', CLIENT_EXT);
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

interface GatewayProcess {
  child: ChildProcess;
  url: string;
  output(): string;
  stop(): Promise<void>;
}

const children: GatewayProcess[] = [];
afterAll(async () => {
  for (const c of children) await c.stop();
});

/** `server/main.ts` over a memory backend on free ports, returned once it serves and has printed `ready` (its last banner line). */
async function startGatewayProcess(
  env: Record<string, string>,
  ready = /Live status page at/,
): Promise<GatewayProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'server/main.ts'], {
    cwd: root,
    env: { ...process.env, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info', GATEWAY_BACKENDS: 'lab=memory', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (out += d.toString()));
  const p: GatewayProcess = {
    child,
    url: '',
    output: () => out,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGKILL');
      await exited;
    },
  };
  children.push(p);
  await until(
    () => ready.test(out) || child.exitCode !== null,
    () => `the gateway to start; output:\n${out}`,
    30_000,
  );
  p.url = /ready at (\S+)/.exec(out)?.[1] ?? '';
  return p;
}

interface Answer {
  status: number;
  body: any;
  /** The server certificate's serial on the connection the answer came over. */
  serial: string;
  reused: boolean;
}

/** A GraphQL POST over HTTPS, on a connection of its own unless `o.agent` says otherwise. Rejects when the connection is refused (handshake or reset). */
function post(url: string, query: string, o: RequestOptions = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      { method: 'POST', headers: { 'content-type': 'application/json' }, agent: false, ...o },
      (res) => {
        // Read now: a keep-alive socket goes back to its agent once the response ends.
        const serial = (res.socket as TLSSocket).getPeerCertificate().serialNumber;
        let text = '';
        res.on('data', (d: Buffer) => (text += d.toString()));
        res.on('end', () =>
          resolve({ status: res.statusCode!, body: JSON.parse(text), serial, reused: req.reusedSocket }),
        );
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(JSON.stringify({ query }));
  });
}

/** The serial of the certificate a new connection is served. */
function servedSerial(url: string): Promise<string> {
  const u = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(
      { host: u.hostname, port: Number(u.port), servername: 'localhost', ca: pem('ca.crt') },
      () => {
        resolve(socket.getPeerCertificate().serialNumber);
        socket.end();
      },
    );
    socket.on('error', reject);
  });
}

const BACKENDS = '{ storageBackends { id } }';
/** The gateway's URL as a WSS URL, whatever scheme it printed. */
const wss = (url: string): string => url.replace(/^\w+:/, 'wss:');

describe('TLS: HTTPS, WSS and reload on SIGHUP', () => {
  let gw: GatewayProcess;
  beforeAll(async () => {
    copyFileSync(at('server-1.crt'), at('cert.pem'));
    copyFileSync(at('server-1.key'), at('key.pem'));
    gw = await startGatewayProcess({ TLS_CERT_FILE: at('cert.pem'), TLS_KEY_FILE: at('key.pem') });
  }, 40_000);

  it('should print an https URL and answer a query over HTTPS', async () => {
    expect(gw.url).toMatch(/^https:\/\/127\.0\.0\.1:\d+\/graphql$/);
    const a = await post(gw.url, BACKENDS, { ca: pem('ca.crt') });
    expect(a.status).toBe(200);
    expect(a.body).toEqual({ data: { storageBackends: [{ id: 'lab' }] } });
    expect(a.serial).toBe('1001');
  });

  it('should serve a graphql-ws subscription over WSS', async () => {
    const ws = new WebSocket(wss(gw.url), 'graphql-transport-ws', { ca: pem('ca.crt') });
    const frames: any[] = [];
    ws.on('message', (d) => frames.push(JSON.parse(messageText(d))));
    try {
      await new Promise((resolve, reject) => ws.once('open', resolve).once('error', reject));
      ws.send(JSON.stringify({ type: 'connection_init', payload: {} }));
      await until(() => frames.some((f) => f.type === 'connection_ack'), 'connection_ack');
      ws.send(
        JSON.stringify({ id: 's1', type: 'subscribe', payload: { query: 'subscription { volumeChanged { type } }' } }),
      );
      await until(
        () => frames.some((f) => f.type === 'next' || f.type === 'error'),
        () => `a subscription frame; got ${JSON.stringify(frames)}`,
      );
      expect(frames.find((f) => f.id === 's1')).toEqual({
        id: 's1',
        type: 'next',
        payload: { data: { volumeChanged: { type: 'SUBSCRIBED' } } },
      });
    } finally {
      ws.close();
    }
  });

  it('should serve the new certificate to new connections after SIGHUP, while an open keep-alive connection keeps working', async () => {
    const agent = new Agent({ keepAlive: true, maxSockets: 1, ca: pem('ca.crt') });
    try {
      const before = await post(gw.url, BACKENDS, { agent });
      expect(before.serial).toBe('1001');
      copyFileSync(at('server-2.crt'), at('cert.pem'));
      copyFileSync(at('server-2.key'), at('key.pem'));
      gw.child.kill('SIGHUP');
      await until(
        () => gw.output().includes('TLS certificates reloaded'),
        () => `the reload; output:\n${gw.output()}`,
      );
      expect(await servedSerial(gw.url)).toBe('2002');
      const after = await post(gw.url, BACKENDS, { agent });
      expect(after).toMatchObject({
        status: 200,
        reused: true,
        serial: '1001',
        body: { data: { storageBackends: [{ id: 'lab' }] } },
      });
    } finally {
      agent.destroy();
    }
  });

  it('should keep the certificate it has when a reload finds a key that does not match, or no key', async () => {
    expect(await servedSerial(gw.url)).toBe('2002');
    copyFileSync(at('server-1.key'), at('key.pem'));
    gw.child.kill('SIGHUP');
    await until(
      () => gw.output().includes('TLS_KEY_MISMATCH'),
      () => `the failed reload; output:\n${gw.output()}`,
    );
    unlinkSync(at('key.pem'));
    gw.child.kill('SIGHUP');
    await until(
      () => gw.output().includes('TLS_FILE_UNREADABLE'),
      () => `the failed reload; output:\n${gw.output()}`,
    );
    expect(gw.child.exitCode).toBeNull();
    expect(await servedSerial(gw.url)).toBe('2002');
    expect((await post(gw.url, BACKENDS, { ca: pem('ca.crt') })).status).toBe(200);
  });
});

describe('mTLS: client certificates against TLS_CLIENT_CA_FILE, and the management port', () => {
  let gw: GatewayProcess;
  let management: string;
  beforeAll(async () => {
    gw = await startGatewayProcess(
      {
        TLS_CERT_FILE: at('server-1.crt'),
        TLS_KEY_FILE: at('server-1.key'),
        TLS_CLIENT_CA_FILE: at('ca.crt'),
        MANAGEMENT_PORT: '0',
      },
      /Health and metrics at \S+ \(/,
    );
    management = /Health and metrics at (\S+)/.exec(gw.output())?.[1] ?? '';
  }, 40_000);

  it('should refuse a client without a certificate at the handshake', async () => {
    await expect(post(gw.url, BACKENDS, { ca: pem('ca.crt') })).rejects.toMatchObject({
      code: 'ERR_SSL_TLSV13_ALERT_CERTIFICATE_REQUIRED',
    });
  });

  it('should serve a client with a certificate from the CA', async () => {
    const a = await post(gw.url, BACKENDS, { ca: pem('ca.crt'), cert: pem('client.crt'), key: pem('client.key') });
    expect(a).toMatchObject({ status: 200, body: { data: { storageBackends: [{ id: 'lab' }] } } });
  });

  it('should refuse a client whose certificate comes from another CA', async () => {
    const stranger = { ca: pem('ca.crt'), cert: pem('stranger.crt'), key: pem('stranger.key') };
    // The server's alert may arrive after the socket is reset: either way no response comes (TLS 1.3 and 1.2).
    const refused = { code: expect.stringMatching(/^(ERR_SSL_\w+|ECONNRESET)$/) };
    await expect(post(gw.url, BACKENDS, stranger)).rejects.toMatchObject(refused);
    await expect(post(gw.url, BACKENDS, { ...stranger, maxVersion: 'TLSv1.2' })).rejects.toMatchObject(refused);
  });

  it('should refuse a WebSocket without a certificate and serve one with it', async () => {
    const refused = new WebSocket(wss(gw.url), 'graphql-transport-ws', { ca: pem('ca.crt') });
    await expect(
      new Promise((resolve, reject) => refused.once('open', resolve).once('error', reject)),
    ).rejects.toThrow();
    const ws = new WebSocket(wss(gw.url), 'graphql-transport-ws', {
      ca: pem('ca.crt'),
      cert: pem('client.crt'),
      key: pem('client.key'),
    });
    try {
      await new Promise((resolve, reject) => ws.once('open', resolve).once('error', reject));
      const ack = new Promise((resolve) => ws.once('message', (d) => resolve(JSON.parse(messageText(d)))));
      ws.send(JSON.stringify({ type: 'connection_init', payload: {} }));
      expect(await ack).toEqual({ type: 'connection_ack' });
    } finally {
      ws.close();
    }
  });

  it('should answer /healthz, /readyz and /metrics on MANAGEMENT_PORT over plain HTTP without a certificate, and nothing else', async () => {
    expect(management).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    const health = await fetch(`${management}/healthz`);
    expect(health.status).toBe(200);
    expect(await health.json()).toEqual({ status: 'ok' });
    expect([200, 503]).toContain((await fetch(`${management}/readyz`)).status);
    const metrics = await fetch(`${management}/metrics`);
    expect(metrics.status).toBe(200);
    expect(await metrics.text()).toContain('gateway_');
    const graphql = await fetch(`${management}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query: BACKENDS }),
    });
    expect(graphql.status).toBe(404);
  });
});

describe('TLS settings', () => {
  it('should refuse a certificate without a key, a key without a certificate, and a client CA without either', () => {
    expect(() => loadConfig({ GATEWAY_BACKENDS: 'lab=memory', TLS_CERT_FILE: '/c.pem' })).toThrow(
      /TLS_KEY_FILE \(file: tls.keyFile\): is missing/,
    );
    expect(() => loadConfig({ GATEWAY_BACKENDS: 'lab=memory', TLS_KEY_FILE: '/k.pem' })).toThrow(
      /TLS_CERT_FILE \(file: tls.certFile\): is missing/,
    );
    expect(() => loadConfig({ GATEWAY_BACKENDS: 'lab=memory', TLS_CLIENT_CA_FILE: '/ca.pem' })).toThrow(ConfigError);
  });

  it('should read the file keys tls.certFile, tls.keyFile, tls.clientCaFile and managementPort', () => {
    const file = at('config.json');
    writeFileSync(
      file,
      JSON.stringify({
        backends: [{ id: 'lab', kind: 'memory' }],
        managementPort: 9464,
        tls: { certFile: '/c.pem', keyFile: '/k.pem', clientCaFile: '/ca.pem' },
      }),
    );
    const config = loadConfig({}, file);
    expect(config.tls).toEqual({ certFile: '/c.pem', keyFile: '/k.pem', clientCaFile: '/ca.pem' });
    expect(config.managementPort).toBe(9464);
  });

  it('should not start with a key that does not belong to the certificate', async () => {
    const config = {
      port: 0,
      host: '127.0.0.1',
      maxConcurrentReads: 4,
      maxBodyBytes: 1_048_576,
      tls: { certFile: at('server-1.crt'), keyFile: at('server-2.key') },
    };
    await expect(
      startGateway({
        config,
        registry: createRegistry(loadConfig({ GATEWAY_BACKENDS: 'lab=memory' }).backends),
        logger: createLogger('silent'),
        readinessProbe: false,
        live: false,
      }),
    ).rejects.toThrow(/TLS_KEY_FILE: .* is not the private key of/);
  });
});

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
