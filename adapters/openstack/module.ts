/** The OpenStack backend module: what the gateway knows about the `openstack` kind (adapters/contract/module.ts). */
import type { BackendModule, CommonBackendSettings } from '../contract/module';
import { ConfigError, numberSetting } from '../contract/settings';
import type { ServiceAuth } from './keystone';
import { OpenStackBackend } from './backend';

/** An OpenStack region: Keystone v3 finds Cinder and Nova in the catalog. */
export interface OpenStackSettings extends CommonBackendSettings {
  kind: 'openstack';
  /** Keystone v3 URL, e.g. `https://keystone.example.com:5000/v3`. */
  url: string;
  /** Region of the endpoints to use. @default 'RegionOne' */
  region: string;
  /** Catalog interface. @default 'public' */
  interface: 'public' | 'internal' | 'admin';
  /** The gateway's own credential, for probes and watchers only (callers send their tokens). @default none */
  auth?: ServiceAuth;
  /** Longest an asynchronous change (attach, extend …) may take before its operation is TIMED_OUT. @default 120000 */
  operationTimeoutMs: number;
  /** Watcher poll interval while a volume is in motion or an operation is pending (ms). @default 500 */
  watchFastMs?: number;
  /** Watcher poll interval otherwise, while anyone listens (ms); at least `watchFastMs`. @default 10000 */
  watchSlowMs?: number;
}

/** The gateway's own OpenStack credential: complete or absent, never half given. */
function serviceAuth(raw: unknown, where: string): ServiceAuth | undefined {
  if (raw === undefined || raw === null) return undefined;
  if (typeof raw !== 'object') throw new ConfigError(where, 'must be an object');
  const a = raw as Record<string, unknown>;
  const need = (key: string): string => {
    const v = a[key];
    if (typeof v !== 'string' || v.length === 0) throw new ConfigError(`${where}.${key}`, 'is missing (a non-empty string is required)');
    return v;
  };
  const opt = (key: string): string | undefined => (typeof a[key] === 'string' && a[key] !== '' ? (a[key] as string) : undefined);
  if (a.method === 'password') {
    return { method: 'password', username: need('username'), password: need('password'), projectName: need('projectName'), userDomainName: opt('userDomainName'), projectDomainName: opt('projectDomainName') };
  }
  if (a.method === 'applicationCredential') return { method: 'applicationCredential', id: need('id'), secret: need('secret') };
  throw new ConfigError(`${where}.method`, 'must be "password" or "applicationCredential"');
}

/** The service credential from `GATEWAY_BACKEND_<ID>_*` or `OS_*` variables (`get` adds the prefix). */
function authFromEnv(get: (setting: string) => string | undefined): Record<string, unknown> | undefined {
  if (get('APPLICATION_CREDENTIAL_ID') || get('APPLICATION_CREDENTIAL_SECRET')) {
    return { method: 'applicationCredential', id: get('APPLICATION_CREDENTIAL_ID'), secret: get('APPLICATION_CREDENTIAL_SECRET') };
  }
  if (get('USERNAME') || get('PASSWORD') || get('PROJECT_NAME')) {
    return { method: 'password', username: get('USERNAME'), password: get('PASSWORD'), projectName: get('PROJECT_NAME'), userDomainName: get('USER_DOMAIN_NAME'), projectDomainName: get('PROJECT_DOMAIN_NAME') };
  }
  return undefined;
}

export const openStackModule: BackendModule<OpenStackSettings> = {
  kind: 'openstack',
  modelKind: 'OPENSTACK',
  displayName: 'OpenStack',
  needsUrl: true,
  credential: { header: 'X-Auth-Token', describe: 'Keystone token', placeholder: '<token>', required: true },
  envSettings: {
    REGION: 'region',
    INTERFACE: 'interface',
    OPERATION_TIMEOUT_MS: 'operationTimeoutMs',
    WATCH_FAST_MS: 'watchFastMs',
    WATCH_SLOW_MS: 'watchSlowMs',
    USERNAME: 'auth.username',
    PASSWORD: 'auth.password',
    PROJECT_NAME: 'auth.projectName',
    USER_DOMAIN_NAME: 'auth.userDomainName',
    PROJECT_DOMAIN_NAME: 'auth.projectDomainName',
    APPLICATION_CREDENTIAL_ID: 'auth.id',
    APPLICATION_CREDENTIAL_SECRET: 'auth.secret',
  },
  fileSettings: ['auth.method'],
  envEntry: (get) => ({
    region: get('REGION'),
    interface: get('INTERFACE'),
    operationTimeoutMs: get('OPERATION_TIMEOUT_MS'),
    watchFastMs: get('WATCH_FAST_MS'),
    watchSlowMs: get('WATCH_SLOW_MS'),
    auth: authFromEnv(get),
  }),
  // The OpenStack clients' own variables (an openrc file) configure one backend `openstack`.
  nativeEnv: {
    prefix: 'OS_',
    trigger: 'OS_AUTH_URL',
    help: '  OS_AUTH_URL, OS_USERNAME … (openrc) a single OpenStack backend with id "openstack"',
    read: (env) =>
      env.OS_AUTH_URL?.trim()
        ? {
            id: 'openstack',
            kind: 'openstack',
            url: env.OS_AUTH_URL.trim(),
            region: env.OS_REGION_NAME || undefined,
            interface: env.OS_INTERFACE || undefined,
            auth: authFromEnv((s) => env[`OS_${s}`] || undefined),
          }
        : undefined,
  },
  parseSettings(raw, common, where) {
    const int = (value: unknown, key: string, min: number, max: number): number => numberSetting(value, `${where}.${key}`, min, max);
    const iface = raw.interface ?? 'public';
    if (iface !== 'public' && iface !== 'internal' && iface !== 'admin') throw new ConfigError(`${where}.interface`, 'must be public, internal or admin');
    if (raw.region !== undefined && (typeof raw.region !== 'string' || raw.region.length === 0)) throw new ConfigError(`${where}.region`, 'must be a non-empty string');
    const watchFastMs = int(raw.watchFastMs ?? 500, 'watchFastMs', 50, 60_000);
    const watchSlowMs = int(raw.watchSlowMs ?? Math.max(10_000, watchFastMs), 'watchSlowMs', 50, 3_600_000);
    if (watchSlowMs < watchFastMs) throw new ConfigError(`${where}.watchSlowMs`, `must be at least watchFastMs (${watchFastMs})`);
    return {
      ...common,
      kind: 'openstack',
      url: common.url!,
      region: (raw.region as string | undefined) ?? 'RegionOne',
      interface: iface,
      auth: serviceAuth(raw.auth, `${where}.auth`),
      operationTimeoutMs: int(raw.operationTimeoutMs ?? 120_000, 'operationTimeoutMs', 1000, 3_600_000),
      watchFastMs,
      watchSlowMs,
    };
  },
  create: (s, deps) =>
    new OpenStackBackend({
      backend: s.id,
      authUrl: s.url,
      region: s.region,
      interface: s.interface,
      serviceAuth: s.auth,
      timeoutMs: s.timeoutMs,
      maxConnections: s.maxConnections,
      readRetries: s.readRetries,
      operationTimeoutMs: s.operationTimeoutMs,
      watchFastMs: s.watchFastMs,
      watchSlowMs: s.watchSlowMs,
      onCall: deps.onCall,
      breakers: deps.breakers,
    }),
};
