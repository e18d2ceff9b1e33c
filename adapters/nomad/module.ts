/** The Nomad backend module: what the gateway knows about the `nomad` kind (adapters/contract/module.ts). */
import type { BackendModule, CommonBackendSettings } from '../contract/module';
import { ConfigError } from '../contract/settings';
import { NomadBackend } from './backend';

/** A Nomad cluster. */
export interface NomadSettings extends CommonBackendSettings {
  kind: 'nomad';
  /** Base URL, e.g. `https://nomad.example.com:4646`. */
  url: string;
  /**
   * The gateway's own token for this backend. Used only by the gateway's own watchers and
   * probes, never for callers' requests (callers send theirs). @default undefined
   */
  token?: string;
}

export const nomadModule: BackendModule<NomadSettings> = {
  kind: 'nomad',
  modelKind: 'NOMAD',
  displayName: 'Nomad',
  needsUrl: true,
  credential: { header: 'X-Nomad-Token', describe: 'Nomad ACL token', placeholder: '<secret>', required: false },
  envSettings: { TOKEN: 'token' },
  nativeEnv: {
    prefix: 'NOMAD_',
    trigger: 'NOMAD_ADDR',
    help: '  NOMAD_ADDR / NOMAD_TOKEN            a single Nomad backend with id "nomad"',
    read: (env) => (env.NOMAD_ADDR?.trim() ? { id: 'nomad', kind: 'nomad', url: env.NOMAD_ADDR.trim(), token: env.NOMAD_TOKEN || undefined } : undefined),
  },
  parseSettings(raw, common, where) {
    if (raw.token !== undefined && (typeof raw.token !== 'string' || raw.token.length === 0)) throw new ConfigError(`${where}.token`, 'must be a non-empty string');
    return { ...common, kind: 'nomad', url: common.url!, token: raw.token as string | undefined };
  },
  create: (s, deps) =>
    new NomadBackend({ backend: s.id, baseUrl: s.url, token: s.token, timeoutMs: s.timeoutMs, maxConnections: s.maxConnections, readRetries: s.readRetries, onCall: deps.onCall, breakers: deps.breakers }),
};
