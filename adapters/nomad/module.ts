/** The Nomad backend module: what the gateway knows about the `nomad` kind (adapters/contract/module.ts). */
import type { BackendModule } from '../contract/module';
import { NomadBackend } from './backend';
import { NOMAD_SETTINGS, parseNomadSettings, type NomadSettings } from './settings';

export const nomadModule: BackendModule<NomadSettings> = {
  kind: 'nomad',
  modelKind: 'NOMAD',
  displayName: 'Nomad',
  needsUrl: true,
  credential: { header: 'X-Nomad-Token', describe: 'Nomad ACL token', placeholder: '<secret>', required: false },
  settings: NOMAD_SETTINGS,
  nativeEnv: {
    prefix: 'NOMAD_',
    trigger: 'NOMAD_ADDR',
    help: '  NOMAD_ADDR / NOMAD_TOKEN            a single Nomad backend with id "nomad"',
    read: (env) =>
      env.NOMAD_ADDR?.trim()
        ? { id: 'nomad', kind: 'nomad', url: env.NOMAD_ADDR.trim(), token: env.NOMAD_TOKEN || undefined }
        : undefined,
  },
  helpExample: {
    env: { NOMAD_ADDR: 'https://nomad.example.com:4646' },
    says: 'one Nomad cluster, id "nomad"; NOMAD_TOKEN: the gateway\'s own token (watchers, probes)',
  },
  parseSettings: parseNomadSettings,
  create: (s, deps) =>
    new NomadBackend({
      backend: s.id,
      baseUrl: s.url,
      token: s.token,
      timeoutMs: s.timeoutMs,
      maxConnections: s.maxConnections,
      readRetries: s.readRetries,
      onCall: deps.onCall,
      breakers: deps.breakers,
      diagnosis: s.diagnosis,
    }),
};
