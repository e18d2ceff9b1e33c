/** The Nomad backend's own settings: keys of its `backends[]` entry, or `GATEWAY_BACKEND_<ID>_<env>`. */
import type { CommonBackendSettings } from '../contract/module';
import { integer, readGroup, setting, text } from '../contract/settings';
import { DEFAULT_NOMAD_DIAGNOSIS_THRESHOLDS } from './diagnosis/thresholds';

/** The volume doctor's thresholds (diagnosis/thresholds.ts derives the defaults from Nomad's own timings). */
const DIAGNOSIS_SETTINGS = {
  stuckClaimMs: setting({
    env: 'DIAGNOSIS_STUCK_CLAIM_MS',
    rule: integer(0, 7 * 24 * 3_600_000),
    default: DEFAULT_NOMAD_DIAGNOSIS_THRESHOLDS.stuckClaimMs,
    doc: "Nomad: how long a claim may outlive its allocation (terminal or garbage-collected) before the volume doctor reports a STUCK_CLAIM, ms; the default is Nomad's csi_volume_claim_gc_interval (5 min) + csi_volume_claim_gc_threshold (5 min) + 1 min.",
  }),
  missingPluginMs: setting({
    env: 'DIAGNOSIS_MISSING_PLUGIN_MS',
    rule: integer(0, 7 * 24 * 3_600_000),
    default: DEFAULT_NOMAD_DIAGNOSIS_THRESHOLDS.missingPluginMs,
    doc: "Nomad: how long a plugin may be unhealthy where a released claim or a controller-requiring volume needs it before the volume doctor reports a CLAIM_ON_MISSING_PLUGIN, ms; the default is twice a plugin's health_timeout (30 s) plus the client's fingerprint interval (30 s).",
  }),
} as const;

export const NOMAD_SETTINGS = {
  token: setting({
    env: 'TOKEN',
    rule: text(),
    doc: "Nomad: the gateway's own ACL token, for its watchers and probes only; callers' requests always carry the caller's token.",
  }),
  diagnosis: DIAGNOSIS_SETTINGS,
} as const;

/** A Nomad cluster. */
export interface NomadSettings extends CommonBackendSettings {
  kind: 'nomad';
  /** Base URL, e.g. `https://nomad.example.com:4646`. */
  url: string;
  /** {@link NOMAD_SETTINGS}`.token`. */
  token?: string;
  /** {@link NOMAD_SETTINGS}`.diagnosis`: the volume doctor's thresholds, ms. */
  diagnosis: { stuckClaimMs: number; missingPluginMs: number };
}

/** @throws ConfigError naming the setting (`where.key`) */
export function parseNomadSettings(
  raw: Record<string, unknown>,
  common: CommonBackendSettings,
  where: string,
): NomadSettings {
  return { ...common, kind: 'nomad', url: common.url!, ...readGroup(NOMAD_SETTINGS, { file: raw, path: where }) };
}
