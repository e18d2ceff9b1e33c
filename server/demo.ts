/**
 * Demo mode: with no backends configured, the gateway starts simulated backends with demo data
 * on loopback and serves them: two Nomad clusters (`nomad-east`, `nomad-west`) and one OpenStack
 * region (`openstack`: Keystone, Cinder, Nova).
 */
import { NomadSimulator } from '../simulators/nomad';
import { demoNodeIds, demoTokens, seedDemoCluster } from '../simulators/nomad/demo';
import { seedNomadActivity } from '../simulators/nomad/demo-activity';
import { OpenStackSimulator } from '../simulators/openstack';
import { seedNovaActivity } from '../simulators/openstack/demo-activity';
import { COMMON_BACKEND_DEFAULTS, perBackendHeader } from '../adapters/contract/module';
import { moduleForKind } from '../adapters/modules';
import type { BackendEntry } from './config';
import { demoActivityFromEnv, startDemoActivity, type DemoActivity, type DemoActivityOptions, type DemoActivityStep } from './demo-activity';

/**
 * The demo region's Keystone token for project `demo`, fixed so the README's examples work
 * verbatim. Real Keystone tokens are issued by `POST /v3/auth/tokens`; this one is minted by the
 * simulator's control side and lasts a year.
 */
export const DEMO_OPENSTACK_TOKEN = 'demo-openstack-token';

/** Id of the demo OpenStack backend. */
export const DEMO_OPENSTACK_BACKEND = 'openstack';

export interface DemoBackends {
  backends: BackendEntry[];
  /** Nomad tokens a demo user can send, per backend id (printed at start; demo data only). */
  tokens: Record<string, { management: string; readOnly: string }>;
  /** The demo OpenStack region: its Keystone and a token and password login of the `demo` user. */
  openstack: { backend: string; keystoneUrl: string; token: string; username: string; password: string; project: string; projectId: string };
  /** Every header a demo caller sends to read and write all demo backends. */
  headers: Record<string, string>;
  /** GraphiQL's headers editor pre-filled with {@link headers}, so the demo works from the browser. */
  graphiqlHeaders: string;
  /** What the demo serves and the credentials to send, one line each, printed at start (header names from the backends' modules). */
  banner: string[];
  /** The running demo activity (server/demo-activity.ts); undefined when it is off. */
  activity?: DemoActivity;
  /** Stops the activity, then the simulated backends. */
  stop(): Promise<void>;
}

export interface DemoBackendsOptions {
  /**
   * Changes the demo backends make by themselves: `nomad-east`'s `build-cache` volume is claimed
   * and released, OpenStack's `ci-scratch` volume is attached to `ci-worker-1` and detached, one
   * step every `intervalMs` (server/demo-activity.ts). `false` turns it off.
   * @default from the environment: on every 5 s; `DEMO_ACTIVITY=0` off, `DEMO_ACTIVITY_INTERVAL_MS` the interval
   */
  activity?: DemoActivityOptions | false;
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

export async function startDemoBackends(o: DemoBackendsOptions = {}): Promise<DemoBackends> {
  const activityOptions = o.activity ?? demoActivityFromEnv(process.env);
  const stops: Array<() => Promise<void>> = [];
  const backends: BackendEntry[] = [];
  const tokens: DemoBackends['tokens'] = {};
  const steps: DemoActivityStep[] = [];
  try {
    for (const variant of ['east', 'west'] as const) {
      // Anonymous callers may read every namespace, so the README's queries work without a token;
      // writes need the printed management token, as on a real cluster with ACLs.
      const sim = new NomadSimulator({ acl: { enabled: true, anonymousRead: '*' } });
      const t = seedDemoCluster(sim, variant);
      // East only: the README shows west's volumes with their exact status.
      if (activityOptions && variant === 'east') {
        const nomad = seedNomadActivity(sim, { nodeIds: demoNodeIds(variant), plugin: 'aws-ebs0', externalId: 'vol-0e45000000000a0ff', idPrefix: 'e0a1ac00-0000-4000-8000-0000' });
        steps.push({ name: 'nomad-east claim/release', run: () => nomad.step() });
      }
      const url = await sim.listen(0, '127.0.0.1');
      stops.push(() => sim.close());
      const id = `nomad-${variant}`;
      backends.push({ id, kind: 'nomad', url, token: t.managementToken, ...COMMON_BACKEND_DEFAULTS });
      tokens[id] = { management: t.managementToken, readOnly: t.readOnlyToken };
    }
    const os = new OpenStackSimulator({});
    const creds = os.seedDemo();
    const token = os.issueToken({ user: creds.demo.username, project: creds.demo.project, ttlMs: 365 * 24 * 3_600_000, id: DEMO_OPENSTACK_TOKEN });
    const { keystoneUrl, novaUrl } = await os.listen();
    stops.push(() => os.close());
    if (activityOptions) {
      const nova = seedNovaActivity(os, { project: creds.demo.project, novaUrl, token });
      steps.push({ name: 'openstack attach/detach', run: (signal) => nova.step(signal) });
    }
    backends.push({
      id: DEMO_OPENSTACK_BACKEND,
      kind: 'openstack',
      url: keystoneUrl,
      region: creds.region,
      interface: 'public',
      // The gateway's own credential (readiness probes only); callers send their own tokens.
      auth: { method: 'password', username: creds.admin.username, password: creds.admin.password, userDomainName: 'Default', projectName: creds.admin.project, projectDomainName: 'Default' },
      ...COMMON_BACKEND_DEFAULTS,
    });
    const openstack = { backend: DEMO_OPENSTACK_BACKEND, keystoneUrl, token, username: creds.demo.username, password: creds.demo.password, project: creds.demo.project, projectId: creds.projects.demo };
    // Header names are the modules'. The region's token goes in the kind's shared header, as the
    // README's examples send it; each cluster's management token in its per-backend one.
    const header = (b: BackendEntry, perBackend: boolean): string => {
      const spec = moduleForKind(b.kind)!.credential;
      return perBackend ? perBackendHeader(spec, b.id) : spec.header;
    };
    const regionHeader = header(backends.find((b) => b.id === DEMO_OPENSTACK_BACKEND)!, false);
    const clusterHeaders = Object.entries(tokens).map(([id, t]) => ({ id, name: header(backends.find((b) => b.id === id)!, true), token: t.management }));
    const headers: Record<string, string> = { [regionHeader]: token };
    for (const c of clusterHeaders) headers[c.name] = c.token;
    const banner = [
      'Demo mode: serving two simulated Nomad clusters and one OpenStack region with demo data.',
      ...clusterHeaders.map((c) => `  ${c.id}: ${c.name}: ${c.token}   (management, demo only)`),
      `  ${openstack.backend}: ${regionHeader}: ${token}   (Keystone token of user ${openstack.username}, project ${openstack.project}; demo only)`,
      `  ${openstack.backend}: Keystone at ${keystoneUrl} (user ${openstack.username}, password ${openstack.password})`,
    ];
    const graphiqlHeaders = `{\n  // Demo credentials (demo data only): your own tokens go here against real backends.\n${Object.entries(headers)
      .map(([k, v]) => `  ${JSON.stringify(k)}: ${JSON.stringify(v)}`)
      .join(',\n')}\n}`;
    const activity = activityOptions ? startDemoActivity(steps, activityOptions) : undefined;
    const stop = async (): Promise<void> => {
      await activity?.stop();
      await Promise.all(stops.map((s) => s()));
    };
    return { backends, tokens, openstack, headers, graphiqlHeaders, banner, ...(activity ? { activity } : {}), stop };
  } catch (err) {
    await Promise.all(stops.map((s) => s()));
    throw err;
  }
}
