/**
 * What the TLS tests share: certificates made by `openssl` (a CA, server certificates for
 * 127.0.0.1/localhost with serials 1001 and 2002, a client certificate from that CA, and one from
 * another CA) in a temporary folder, `server/main.ts` run in a child process over a memory backend,
 * and HTTPS calls that report the certificate they were served. The folder is made when this module
 * loads, once per test file (jest loads modules per file); call makeCertificates in beforeAll,
 * removeCertificates and stopGatewayProcesses in afterAll.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request, type RequestOptions } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect, type TLSSocket } from 'node:tls';
import { until } from '../support/until';

const root = join(__dirname, '..', '..');
const dir = mkdtempSync(join(tmpdir(), 'gateway-tls-'));
/** The path of `name` in the certificates' folder. */
export const at = (name: string): string => join(dir, name);
/** The contents of `name` in the certificates' folder. */
export const pem = (name: string): Buffer => readFileSync(at(name));

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

/**
 * Makes the certificates: ca, other-ca, server-1 (serial 1001), server-2 (2002), client (3003) and
 * stranger (4004, from other-ca).
 */
export function makeCertificates(): void {
  makeCa('ca');
  makeCa('other-ca');
  makeCert('server-1', 'ca', '1001', SERVER_EXT);
  makeCert('server-2', 'ca', '2002', SERVER_EXT);
  makeCert('client', 'ca', '3003', CLIENT_EXT);
  makeCert('stranger', 'other-ca', '4004', CLIENT_EXT);
}

/** Removes the certificates' folder. */
export function removeCertificates(): void {
  rmSync(dir, { recursive: true, force: true });
}

/** A gateway run as `server/main.ts` in a child process. */
export interface GatewayProcess {
  child: ChildProcess;
  url: string;
  output(): string;
  stop(): Promise<void>;
}

const children: GatewayProcess[] = [];

/** Kills every gateway process this module started. */
export async function stopGatewayProcesses(): Promise<void> {
  for (const c of children) await c.stop();
}

/** `server/main.ts` over a memory backend on free ports, returned once it serves and has printed `ready` (its last banner line). */
export async function startGatewayProcess(
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

export interface Answer {
  status: number;
  body: any;
  /** The server certificate's serial on the connection the answer came over. */
  serial: string;
  reused: boolean;
}

/** A GraphQL POST over HTTPS, on a connection of its own unless `o.agent` says otherwise. Rejects when the connection is refused (handshake or reset). */
export function post(url: string, query: string, o: RequestOptions = {}): Promise<Answer> {
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
export function servedSerial(url: string): Promise<string> {
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

/** A query every gateway answers: its backends' ids. */
export const BACKENDS = '{ storageBackends { id } }';
/** The gateway's URL as a WSS URL, whatever scheme it printed. */
export const wss = (url: string): string => url.replace(/^\w+:/, 'wss:');
