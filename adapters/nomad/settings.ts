/** The Nomad backend's own settings: keys of its `backends[]` entry, or `GATEWAY_BACKEND_<ID>_<env>`. */
import type { CommonBackendSettings } from '../contract/module';
import { readGroup, setting, text } from '../contract/settings';

export const NOMAD_SETTINGS = {
  token: setting({
    env: 'TOKEN',
    rule: text(),
    doc: "Nomad: the gateway's own ACL token, for its watchers and probes only; callers' requests always carry the caller's token.",
  }),
} as const;

/** A Nomad cluster. */
export interface NomadSettings extends CommonBackendSettings {
  kind: 'nomad';
  /** Base URL, e.g. `https://nomad.example.com:4646`. */
  url: string;
  /** {@link NOMAD_SETTINGS}`.token`. */
  token?: string;
}

/** @throws ConfigError naming the setting (`where.key`) */
export function parseNomadSettings(
  raw: Record<string, unknown>,
  common: CommonBackendSettings,
  where: string,
): NomadSettings {
  return { ...common, kind: 'nomad', url: common.url!, ...readGroup(NOMAD_SETTINGS, { file: raw, path: where }) };
}
