/**
 * The OpenStack backend's own settings: keys of its `backends[]` entry, or
 * `GATEWAY_BACKEND_<ID>_<env>` variables; the service credential under `auth`.
 */
import { DEFAULT_CHANGE_TIMEOUT_MS } from '../contract/completion';
import type { CommonBackendSettings } from '../contract/module';
import { ConfigError, integer, oneOf, readGroup, readSetting, setting, text } from '../contract/settings';
import { CATALOG_DEFAULTS } from './client';
import { DIAGNOSIS_DEFAULTS, DRIFT_GRACE_POLLS, type DiagnosisThresholds } from './diagnosis/thresholds';
import type { ServiceAuth } from './keystone';
import { WATCH_DEFAULTS } from './watch';

const AUTH_METHODS = ['password', 'applicationCredential'] as const;
const INTERFACES = ['public', 'internal', 'admin'] as const;

const ms = (env: string, d: number, doc: string) =>
  setting({
    env: `DOCTOR_${env}`,
    rule: integer(0, 86_400_000),
    default: d,
    doc: `OpenStack volume doctor: ${doc}, ms.`,
  });

/**
 * The volume doctor's thresholds (file `doctor`; docs/openstack.md, "Volume doctor", derives each
 * default from Cinder's and Nova's own timeouts: diagnosis/thresholds.ts).
 */
const DOCTOR_SETTINGS = {
  creatingMs: ms(
    'CREATING_MS',
    DIAGNOSIS_DEFAULTS.creatingMs,
    "how long a volume may stay creating before it is stuck (Nova's block_device_allocate_retries 60 × block_device_allocate_retries_interval 3 s)",
  ),
  attachingMs: ms(
    'ATTACHING_MS',
    DIAGNOSIS_DEFAULTS.attachingMs,
    'how long a volume may stay attaching or reserved (not of a shelved-offloaded server) before it is stuck (3 × rpc_response_timeout 60 s)',
  ),
  detachingMs: ms(
    'DETACHING_MS',
    DIAGNOSIS_DEFAULTS.detachingMs,
    "how long a volume may stay detaching before it is stuck (Nova's [libvirt] device_detach_attempts 8 × device_detach_timeout 20 s, plus rpc_response_timeout 60 s)",
  ),
  extendingMs: ms(
    'EXTENDING_MS',
    DIAGNOSIS_DEFAULTS.extendingMs,
    'how long a volume may stay extending before it is stuck (3 × rpc_response_timeout 60 s)',
  ),
  deletingMs: ms(
    'DELETING_MS',
    DIAGNOSIS_DEFAULTS.deletingMs,
    "how long a volume may stay deleting before it is stuck, plus copyPerGiBMs per GiB (LVM's volume_clear zeroes the whole volume; 3 × rpc_response_timeout 60 s)",
  ),
  copyBaseMs: ms(
    'COPY_BASE_MS',
    DIAGNOSIS_DEFAULTS.copyBaseMs,
    'the fixed part of the threshold of downloading, uploading, backing-up, restoring-backup, retyping and maintenance, plus copyPerGiBMs per GiB (5 × rpc_response_timeout 60 s to set a copy up)',
  ),
  copyPerGiBMs: ms(
    'COPY_PER_GIB_MS',
    DIAGNOSIS_DEFAULTS.copyPerGiBMs,
    "what each GiB adds to the copy states' and deleting's thresholds (Cinder bounds copies by no timeout: a throughput floor of about 34 MiB/s)",
  ),
  driftGraceMs: setting({
    env: 'DOCTOR_DRIFT_GRACE_MS',
    rule: integer(0, 86_400_000),
    defaultNote: `${DRIFT_GRACE_POLLS} × watchSlowMs`,
    doc: `OpenStack volume doctor: how long Nova and Cinder may disagree about an attachment before it is drift, ms (default ${DRIFT_GRACE_POLLS} watcher polls at watchSlowMs: a normal attach shows in the two APIs at different moments).`,
  }),
} as const;

/** The gateway's own OpenStack credential (file `auth`): complete for its `method` or absent. */
const AUTH_SETTINGS = {
  method: setting({
    rule: oneOf(AUTH_METHODS, 'must be "password" or "applicationCredential"'),
    doc: 'OpenStack: how the gateway authenticates itself (the variables imply it).',
  }),
  username: setting({ env: 'USERNAME', rule: text(), doc: 'OpenStack, method password: user name.' }),
  password: setting({ env: 'PASSWORD', rule: text(), doc: 'OpenStack, method password: password.' }),
  projectName: setting({
    env: 'PROJECT_NAME',
    rule: text(),
    doc: 'OpenStack, method password: project to scope the token to.',
  }),
  userDomainName: setting({
    env: 'USER_DOMAIN_NAME',
    rule: text(),
    defaultNote: 'Default',
    doc: "OpenStack, method password: the user's domain.",
  }),
  projectDomainName: setting({
    env: 'PROJECT_DOMAIN_NAME',
    rule: text(),
    defaultNote: 'Default',
    doc: "OpenStack, method password: the project's domain.",
  }),
  id: setting({
    env: 'APPLICATION_CREDENTIAL_ID',
    rule: text(),
    doc: 'OpenStack, method applicationCredential: its id.',
  }),
  secret: setting({
    env: 'APPLICATION_CREDENTIAL_SECRET',
    rule: text(),
    doc: 'OpenStack, method applicationCredential: its secret.',
  }),
} as const;

export const OPENSTACK_SETTINGS = {
  region: setting({
    env: 'REGION',
    rule: text(),
    default: CATALOG_DEFAULTS.region,
    doc: 'OpenStack: the catalog region whose Cinder and Nova endpoints are used.',
  }),
  interface: setting<(typeof INTERFACES)[number]>({
    env: 'INTERFACE',
    rule: oneOf(INTERFACES, 'must be public, internal or admin'),
    default: CATALOG_DEFAULTS.interface,
    doc: 'OpenStack: catalog interface.',
  }),
  operationTimeoutMs: setting({
    env: 'OPERATION_TIMEOUT_MS',
    rule: integer(1000, 3_600_000),
    default: DEFAULT_CHANGE_TIMEOUT_MS,
    doc: 'OpenStack: longest an asynchronous change (attach, extend …) may take before its operation is TIMED_OUT, ms.',
  }),
  watchFastMs: setting({
    env: 'WATCH_FAST_MS',
    rule: integer(50, 60_000),
    default: WATCH_DEFAULTS.fastMs,
    doc: "OpenStack: the watcher's poll interval while an operation is pending or a volume's transition is in its window (watchTransitionWindowMs), ms.",
  }),
  watchSlowMs: setting({
    env: 'WATCH_SLOW_MS',
    rule: integer(50, 3_600_000),
    defaultNote: `${WATCH_DEFAULTS.slowMs} (at least watchFastMs)`,
    doc: "OpenStack: the watcher's poll interval otherwise, while anyone listens, ms; at least watchFastMs.",
  }),
  watchTransitionWindowMs: setting({
    env: 'WATCH_TRANSITION_WINDOW_MS',
    rule: integer(0, 3_600_000),
    default: WATCH_DEFAULTS.transitionWindowMs,
    doc: "OpenStack: how long one transition of a volume (per volume and status) keeps the watcher's fast interval after it is first seen, ms; a volume that stays in it is then polled at watchSlowMs. The gateway's own pending operations keep it fast whatever this is.",
  }),
  doctor: DOCTOR_SETTINGS,
  auth: AUTH_SETTINGS,
} as const;

/** An OpenStack region: Keystone v3 finds Cinder and Nova in the catalog. Meanings and defaults: {@link OPENSTACK_SETTINGS}. */
export interface OpenStackSettings extends CommonBackendSettings {
  kind: 'openstack';
  /** Keystone v3 URL, e.g. `https://keystone.example.com:5000/v3`. */
  url: string;
  region: string;
  interface: (typeof INTERFACES)[number];
  /** The gateway's own credential, for probes and watchers only (callers send their tokens). @default none */
  auth?: ServiceAuth;
  operationTimeoutMs: number;
  watchFastMs?: number;
  watchSlowMs?: number;
  watchTransitionWindowMs?: number;
  /** The volume doctor's thresholds ({@link OPENSTACK_SETTINGS}.doctor); an absent one at its default (driftGraceMs: 2 × watchSlowMs). */
  doctor?: Partial<DiagnosisThresholds>;
}

/** The gateway's own OpenStack credential: complete or absent, never half given. */
function serviceAuth(raw: unknown, where: string): ServiceAuth | undefined {
  if (raw === undefined || raw === null) return undefined;
  // An empty string is an absent key, as the variables' blank values are.
  const given =
    typeof raw === 'object' && !Array.isArray(raw)
      ? Object.fromEntries(Object.entries(raw).filter(([, v]) => v !== ''))
      : raw;
  const a = readGroup(AUTH_SETTINGS, { file: given, path: where });
  const need = (key: 'username' | 'password' | 'projectName' | 'id' | 'secret'): string => {
    const v = a[key];
    if (v === undefined) throw new ConfigError(`${where}.${key}`, 'is missing (a non-empty string is required)');
    return v;
  };
  if (a.method === 'password') {
    return {
      method: 'password',
      username: need('username'),
      password: need('password'),
      projectName: need('projectName'),
      userDomainName: a.userDomainName,
      projectDomainName: a.projectDomainName,
    };
  }
  if (a.method === 'applicationCredential')
    return { method: 'applicationCredential', id: need('id'), secret: need('secret') };
  throw new ConfigError(`${where}.method`, 'must be "password" or "applicationCredential"');
}

/** @throws ConfigError naming the setting (`where.key`) */
export function parseOpenStackSettings(
  raw: Record<string, unknown>,
  common: CommonBackendSettings,
  where: string,
): OpenStackSettings {
  const { auth: _auth, watchSlowMs: _slow, ...own } = OPENSTACK_SETTINGS;
  const v = readGroup(own, { file: raw, path: where });
  const src = { file: raw, path: where };
  const watchSlowMs =
    readSetting(OPENSTACK_SETTINGS.watchSlowMs, 'watchSlowMs', src) ?? Math.max(WATCH_DEFAULTS.slowMs, v.watchFastMs);
  if (watchSlowMs < v.watchFastMs)
    throw new ConfigError(`${where}.watchSlowMs`, `must be at least watchFastMs (${v.watchFastMs})`);
  return {
    ...common,
    kind: 'openstack',
    url: common.url!,
    ...v,
    auth: serviceAuth(raw.auth, `${where}.auth`),
    watchSlowMs,
  };
}
