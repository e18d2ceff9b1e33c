/**
 * The gateway's TLS: the certificate, key and client CA read from their files, checked before
 * use (PEMs that parse, a key that matches the certificate), the server options they make
 * (client certificates required when a client CA is given), and their reload on a running
 * server: new connections get the new certificate, open ones keep theirs, and a reload whose
 * files are unusable changes nothing.
 */
import { X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { Server } from 'node:http';
import type { ServerOptions } from 'node:https';
import { createSecureContext, type SecureContextOptions, type Server as TlsServer } from 'node:tls';
import { ConfigError } from '../../adapters/contract/settings';
import type { Logger } from '../logger';
import { TLS_SETTINGS, type TlsConfig } from './tls-config';

/** Codes of {@link TlsFilesError}. */
export const TlsFilesErrorCode = {
  /** A file could not be read. */
  Unreadable: 'TLS_FILE_UNREADABLE',
  /** A file is not the PEM it should be. */
  Invalid: 'TLS_FILE_INVALID',
  /** The key does not belong to the certificate (or cannot be used). */
  KeyMismatch: 'TLS_KEY_MISMATCH',
} as const;
export type TlsFilesErrorCode = (typeof TlsFilesErrorCode)[keyof typeof TlsFilesErrorCode];

/** The TLS files cannot be used; `setting` names the file's variable. */
export class TlsFilesError extends Error {
  constructor(
    readonly code: TlsFilesErrorCode,
    readonly setting: string,
    message: string,
  ) {
    super(`${setting}: ${message}`);
    this.name = 'TlsFilesError';
  }
}

/** What is safe to log of a certificate (never the key). */
export interface CertificateSummary {
  subject: string;
  serialNumber: string;
  fingerprint256: string;
  validTo: string;
}

/** The TLS of a server: its options at start, and a reload for SIGHUP. */
export interface ServerTls {
  /** For `https.createServer`: the files' contents, and client certificates required when a client CA is given. */
  serverOptions: ServerOptions;
  /** The certificate served now. */
  certificate(): CertificateSummary;
  /**
   * Reads the files again and gives new connections what they hold; open connections keep the
   * certificate they have. Unusable files are logged and change nothing. @returns whether the new files are in use
   */
  reload(server: Server): boolean;
}

function read(file: string, settingKey: keyof typeof TLS_SETTINGS): Buffer {
  try {
    return readFileSync(file);
  } catch (err) {
    throw new TlsFilesError(
      TlsFilesErrorCode.Unreadable,
      TLS_SETTINGS[settingKey].env!,
      `cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`,
    );
  }
}

function parseCertificate(pem: Buffer, settingKey: keyof typeof TLS_SETTINGS, file: string): X509Certificate {
  try {
    return new X509Certificate(pem);
  } catch {
    throw new TlsFilesError(
      TlsFilesErrorCode.Invalid,
      TLS_SETTINGS[settingKey].env!,
      `${file} holds no PEM certificate`,
    );
  }
}

const summary = (c: X509Certificate): CertificateSummary => ({
  subject: c.subject.replace(/\n/g, ', '),
  serialNumber: c.serialNumber,
  fingerprint256: c.fingerprint256,
  validTo: c.validTo,
});

/** The files' contents, checked by building a secure context from them. @throws TlsFilesError naming the file at fault */
export function readTlsFiles(c: TlsConfig): { context: SecureContextOptions; certificate: CertificateSummary } {
  const cert = read(c.certFile, 'certFile');
  const key = read(c.keyFile, 'keyFile');
  const ca = c.clientCaFile === undefined ? undefined : read(c.clientCaFile, 'clientCaFile');
  const certificate = summary(parseCertificate(cert, 'certFile', c.certFile));
  if (ca) parseCertificate(ca, 'clientCaFile', c.clientCaFile!);
  const context: SecureContextOptions = { cert, key, ...(ca ? { ca } : {}) };
  try {
    createSecureContext(context);
  } catch (err) {
    // The certificate and CA parsed, so what is left is the key: not a key, or not this certificate's.
    throw new TlsFilesError(
      TlsFilesErrorCode.KeyMismatch,
      TLS_SETTINGS.keyFile.env!,
      `${c.keyFile} is not the private key of ${c.certFile} (${(err as Error).message})`,
    );
  }
  return { context, certificate };
}

/**
 * The server's TLS from its files, read now. @throws ConfigError naming the file's setting when
 * the files are unusable: the gateway does not start without a usable certificate
 */
export function loadServerTls(c: TlsConfig, logger: Logger): ServerTls {
  let current: ReturnType<typeof readTlsFiles>;
  try {
    current = readTlsFiles(c);
  } catch (err) {
    if (err instanceof TlsFilesError) throw new ConfigError(err.setting, err.message.slice(err.setting.length + 2));
    throw err;
  }
  logger.info({ certificate: current.certificate, clientCertificates: c.clientCaFile !== undefined }, 'TLS on');
  return {
    serverOptions: {
      ...current.context,
      ...(c.clientCaFile !== undefined ? { requestCert: true, rejectUnauthorized: true } : {}),
    },
    certificate: () => current.certificate,
    reload(server) {
      try {
        // Checked first: setSecureContext would keep the old context on bad files, but not the server's copy of them.
        const next = readTlsFiles(c);
        // The server was made from `serverOptions` (createHttpServer): an https.Server.
        (server as unknown as TlsServer).setSecureContext(next.context);
        current = next;
        logger.info({ certificate: next.certificate }, 'TLS certificates reloaded');
        return true;
      } catch (err) {
        logger.error(
          { err, code: err instanceof TlsFilesError ? err.code : undefined, certificate: current.certificate },
          'TLS certificate reload failed; the previous certificate stays in use',
        );
        return false;
      }
    },
  };
}
