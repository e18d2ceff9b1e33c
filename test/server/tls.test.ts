/**
 * TLS and mTLS end to end: certificates made by `openssl` here (a CA, a server certificate for
 * 127.0.0.1/localhost, a client certificate from that CA, and one from another CA), the gateway
 * run as `server/main.ts` in a child process over a memory backend, and real HTTPS and WSS
 * clients. SIGHUP after the files are replaced gives new connections the new certificate while
 * an open keep-alive connection keeps its own; unusable files keep the old certificate. The HTTP
 * edge's rules over HTTPS are in tls-http-edge.test.ts; what both use in tls-helpers.ts.
 */
import { copyFileSync, unlinkSync, writeFileSync } from 'node:fs';
import { Agent } from 'node:https';
import WebSocket from 'ws';
import { startGateway } from '../../server/app';
import { createRegistry } from '../../server/backends';
import { loadConfig } from '../../server/config';
import { ConfigError } from '../../adapters/contract/settings';
import { createLogger } from '../../server/logger';
import { until } from '../support/until';
import { messageText } from '../../server/ws/message-text';
import {
  at,
  BACKENDS,
  makeCertificates,
  pem,
  post,
  removeCertificates,
  servedSerial,
  startGatewayProcess,
  stopGatewayProcesses,
  wss,
  type GatewayProcess,
} from './tls-helpers';

beforeAll(makeCertificates);
afterAll(removeCertificates);
afterAll(stopGatewayProcesses);

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
