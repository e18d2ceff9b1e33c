/**
 * Settings of the volume doctor (docs/doctor.md). Declared once in {@link DOCTOR_SETTINGS} (env
 * `DOCTOR_…`, file `doctor`). Each backend's thresholds are its own settings (its module's), next to
 * what they are derived from.
 */
import { DOCTOR_DEFAULTS } from '../subscriptions/doctor';
import { defaultsOf, integer, oneOf, readGroup, setting, type SettingValues } from '../adapters/contract/settings';

/** The `doctor` group. */
export const DOCTOR_SETTINGS = {
  enabled: setting({
    env: 'DOCTOR',
    rule: oneOf(['on', 'off'] as const),
    default: 'on',
    doc: '`off`: no volume doctor (no problems, no extra reads). With it on, a watched backend that polls keeps polling at its slow interval even with no subscriber, so the doctor sees a current view.',
  }),
  intervalMs: setting({
    env: 'DOCTOR_INTERVAL_MS',
    rule: integer(1000, 3_600_000),
    default: DOCTOR_DEFAULTS.intervalMs,
    doc: "Time between two full passes of one backend, in ms: each reads what its checks need beyond the watcher's view once (at most one listing per check that needs one: docs/doctor.md) and checks every volume. Between passes the watcher's changes are checked as they come.",
  }),
  factsTimeoutMs: setting({
    env: 'DOCTOR_FACTS_TIMEOUT_MS',
    rule: integer(1000, 600_000),
    default: DOCTOR_DEFAULTS.factsTimeoutMs,
    doc: "Longest one pass's extra reads may take, in ms; past it the pass fails and the next one tries again.",
  }),
} as const;

/** The doctor's settings as read; each key's meaning and default are in {@link DOCTOR_SETTINGS}. */
export type DoctorConfig = SettingValues<typeof DOCTOR_SETTINGS>;

export const DOCTOR_CONFIG_DEFAULTS: Readonly<DoctorConfig> = Object.freeze(defaultsOf(DOCTOR_SETTINGS));

/** The `doctor` group. @throws ConfigError naming the setting */
export function loadDoctorConfig(env: NodeJS.ProcessEnv, file: Record<string, unknown>): DoctorConfig {
  return readGroup(DOCTOR_SETTINGS, { env, file: file.doctor, path: 'doctor', strict: true });
}
