/**
 * The `tls` settings group (env `TLS_…`, file `tls`): HTTPS and WSS on the gateway's port, and
 * client certificates verified against a CA (mTLS, the router-trust setup of docs/federation.md).
 * docs/tls.md describes the setup; docs/configuration.md, section "TLS", lists the settings.
 */
import { ConfigError, readGroup, setting, settingName, text } from '../../adapters/contract/settings';

const path = text({ trim: true });

/** The `tls` group. */
export const TLS_SETTINGS = {
  certFile: setting({
    env: 'TLS_CERT_FILE',
    rule: path,
    doc: 'PEM file of the server certificate (and its intermediates); with TLS_KEY_FILE the gateway serves HTTPS and WSS. Re-read on SIGHUP.',
  }),
  keyFile: setting({
    env: 'TLS_KEY_FILE',
    rule: path,
    doc: "PEM file of the server certificate's private key (unencrypted). Re-read on SIGHUP.",
  }),
  clientCaFile: setting({
    env: 'TLS_CLIENT_CA_FILE',
    rule: path,
    doc: 'PEM file of the CA(s) client certificates must chain to; set, a client without such a certificate is refused at the handshake (mTLS). Needs TLS_CERT_FILE. Re-read on SIGHUP.',
  }),
} as const;

/** TLS on the gateway's port; each field's meaning is in {@link TLS_SETTINGS}. */
export interface TlsConfig {
  certFile: string;
  keyFile: string;
  /** @default undefined: no client certificate is asked for */
  clientCaFile?: string;
}

/**
 * The `tls` group; undefined when neither file is given (plain HTTP).
 * @throws ConfigError naming the setting: one of the certificate and key without the other, or a client CA without them
 */
export function loadTlsConfig(env: NodeJS.ProcessEnv, file: Record<string, unknown>): TlsConfig | undefined {
  const src = { env, file: file.tls, path: 'tls', strict: true };
  const { certFile, keyFile, clientCaFile } = readGroup(TLS_SETTINGS, src);
  const name = (key: keyof typeof TLS_SETTINGS): string => settingName(TLS_SETTINGS, key, src);
  // A missing one is named both ways: which one the operator uses is not known.
  const missing = (key: keyof typeof TLS_SETTINGS): string => `${TLS_SETTINGS[key].env} (file: tls.${key})`;
  if (certFile === undefined && keyFile === undefined) {
    if (clientCaFile !== undefined)
      throw new ConfigError(
        name('clientCaFile'),
        `needs ${missing('certFile')} and ${missing('keyFile')}: client certificates are asked for only over TLS`,
      );
    return undefined;
  }
  if (certFile === undefined)
    throw new ConfigError(missing('certFile'), `is missing: ${name('keyFile')} is set, and TLS needs both`);
  if (keyFile === undefined)
    throw new ConfigError(missing('keyFile'), `is missing: ${name('certFile')} is set, and TLS needs both`);
  return { certFile, keyFile, ...(clientCaFile !== undefined ? { clientCaFile } : {}) };
}
