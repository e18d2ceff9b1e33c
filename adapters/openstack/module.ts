/** The OpenStack backend module: what the gateway knows about the `openstack` kind (adapters/contract/module.ts). */
import type { BackendModule } from '../contract/module';
import { entryFromEnv } from '../contract/settings';
import { OpenStackBackend } from './backend';
import { OPENSTACK_SETTINGS, parseOpenStackSettings, type OpenStackSettings } from './settings';

/** The service credential as variables give it (no `method`): its method is implied by which are set. */
function withMethod(auth: unknown): Record<string, unknown> | undefined {
  const a = (auth ?? {}) as Record<string, unknown>;
  if (a.id || a.secret) return { method: 'applicationCredential', id: a.id, secret: a.secret };
  if (a.username || a.password || a.projectName) {
    return {
      method: 'password',
      username: a.username,
      password: a.password,
      projectName: a.projectName,
      userDomainName: a.userDomainName,
      projectDomainName: a.projectDomainName,
    };
  }
  return undefined;
}

export const openStackModule: BackendModule<OpenStackSettings> = {
  kind: 'openstack',
  modelKind: 'OPENSTACK',
  displayName: 'OpenStack',
  needsUrl: true,
  credential: { header: 'X-Auth-Token', describe: 'Keystone token', placeholder: '<token>', required: true },
  // The texts clients have always had for these facets: OpenStack's are Cinder's actions and Nova's servers.
  facetNames: { volumeActions: 'Cinder volume actions', serverAttachments: 'Nova servers' },
  settings: OPENSTACK_SETTINGS,
  envEntry: (entry) => ({ ...entry, auth: withMethod(entry.auth) }),
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
            auth: withMethod(entryFromEnv(OPENSTACK_SETTINGS, (s) => env[`OS_${s}`] || undefined).auth),
          }
        : undefined,
  },
  helpExample: {
    env: { GATEWAY_BACKENDS: 'region1=openstack@https://keystone.example.com:5000/v3' },
    says: 'one OpenStack region by its Keystone URL (or source an openrc file: OS_AUTH_URL …)',
  },
  parseSettings: parseOpenStackSettings,
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
      watchTransitionWindowMs: s.watchTransitionWindowMs,
      doctor: s.doctor,
      onCall: deps.onCall,
      breakers: deps.breakers,
    }),
};
