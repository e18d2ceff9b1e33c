/**
 * Demo mode: with no backends configured, the gateway starts simulated backends with demo data
 * on loopback and serves them: two Nomad clusters (`nomad-east`, `nomad-west`) and one OpenStack
 * region (`openstack`: Keystone, Cinder, Nova).
 */
import { NomadSimulator } from '../simulators/nomad';
import { demoTokens, seedDemoCluster } from '../simulators/nomad/demo';
import { OpenStackSimulator } from '../simulators/openstack';
import type { BackendConfig } from './config';

/**
 * The demo region's Keystone token for project `demo`, fixed so the README's examples work
 * verbatim. Real Keystone tokens are issued by `POST /v3/auth/tokens`; this one is minted by the
 * simulator's control side and lasts a year.
 */
export const DEMO_OPENSTACK_TOKEN = 'demo-openstack-token';

/** Id of the demo OpenStack backend. */
export const DEMO_OPENSTACK_BACKEND = 'openstack';

export interface DemoBackends {
  backends: BackendConfig[];
  /** Nomad tokens a demo user can send, per backend id (printed at start; demo data only). */
  tokens: Record<string, { management: string; readOnly: string }>;
  /** The demo OpenStack region: its Keystone and a token and password login of the `demo` user. */
  openstack: { backend: string; keystoneUrl: string; token: string; username: string; password: string; project: string; projectId: string };
  /** Every header a demo caller sends to read and write all demo backends. */
  headers: Record<string, string>;
  /** GraphiQL's headers editor pre-filled with {@link headers}, so the demo works from the browser. */
  graphiqlHeaders: string;
  stop(): Promise<void>;
}

/** Whether `host` is a loopback address (only this machine can connect). */
export function isLoopbackHost(host: string): boolean {
  const h = host.trim().toLowerCase().replace(/^\[|\]$/g, '');
  return h === 'localhost' || h === '::1' || /^127(\.\d{1,3}){3}$/.test(h) || /^::ffff:127(\.\d{1,3}){3}$/.test(h);
}

/**
 * The warning to print when the demo listens beyond loopback (`HOST` set explicitly, the demo's
 * default being 127.0.0.1): its GraphiQL page hands out the demo's management tokens to anyone
 * who can reach the port. Undefined on loopback.
 */
export function demoExposureWarning(host: string): string | undefined {
  if (isLoopbackHost(host)) return undefined;
  return `WARNING: demo mode is listening on ${host} (HOST), not only on loopback: anyone who can reach this port gets the GraphiQL page and with it the demo's management tokens (${(['east', 'west'] as const).map((v) => demoTokens(v).managementToken).join(', ')}), and can change the demo data. Unset HOST (or HOST=127.0.0.1) to keep the demo on this machine.`;
}

export async function startDemoBackends(): Promise<DemoBackends> {
  const stops: Array<() => Promise<void>> = [];
  const backends: BackendConfig[] = [];
  const tokens: DemoBackends['tokens'] = {};
  try {
    for (const variant of ['east', 'west'] as const) {
      // Anonymous callers may read every namespace, so the README's queries work without a token;
      // writes need the printed management token, as on a real cluster with ACLs.
      const sim = new NomadSimulator({ acl: { enabled: true, anonymousRead: '*' } });
      const t = seedDemoCluster(sim, variant);
      const url = await sim.listen(0, '127.0.0.1');
      stops.push(() => sim.close());
      const id = `nomad-${variant}`;
      backends.push({ id, kind: 'nomad', url, token: t.managementToken, timeoutMs: 10_000, maxConnections: 16, readRetries: 2 });
      tokens[id] = { management: t.managementToken, readOnly: t.readOnlyToken };
    }
    const os = new OpenStackSimulator({});
    const creds = os.seedDemo();
    const token = os.issueToken({ user: creds.demo.username, project: creds.demo.project, ttlMs: 365 * 24 * 3_600_000, id: DEMO_OPENSTACK_TOKEN });
    const { keystoneUrl } = await os.listen();
    stops.push(() => os.close());
    backends.push({
      id: DEMO_OPENSTACK_BACKEND,
      kind: 'openstack',
      url: keystoneUrl,
      region: creds.region,
      interface: 'public',
      // The gateway's own credential (readiness probes only); callers send their own tokens.
      auth: { method: 'password', username: creds.admin.username, password: creds.admin.password, userDomainName: 'Default', projectName: creds.admin.project, projectDomainName: 'Default' },
      operationTimeoutMs: 120_000,
      timeoutMs: 10_000,
      maxConnections: 16,
      readRetries: 2,
    });
    const openstack = { backend: DEMO_OPENSTACK_BACKEND, keystoneUrl, token, username: creds.demo.username, password: creds.demo.password, project: creds.demo.project, projectId: creds.projects.demo };
    const headers: Record<string, string> = { 'X-Auth-Token': token };
    for (const [id, t] of Object.entries(tokens)) headers[`X-Nomad-Token-${id}`] = t.management;
    const graphiqlHeaders = `{\n  // Demo credentials (demo data only): your own tokens go here against real backends.\n${Object.entries(headers)
      .map(([k, v]) => `  ${JSON.stringify(k)}: ${JSON.stringify(v)}`)
      .join(',\n')}\n}`;
    return { backends, tokens, openstack, headers, graphiqlHeaders, stop: async () => void (await Promise.all(stops.map((s) => s()))) };
  } catch (err) {
    await Promise.all(stops.map((s) => s()));
    throw err;
  }
}
