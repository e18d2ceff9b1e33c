/**
 * OpenStack's part of demo mode: one simulated region, backend `openstack` (Keystone, Cinder,
 * Nova), seeded with the demo data (./demo.ts). The gateway logs in as `admin` (readiness probes
 * only); callers send the `demo` user's fixed token. With activity on, `ci-scratch` is attached
 * to `ci-worker-1` and detached through Nova (./demo-activity.ts). Volume `web-1-logs` is left
 * `error_extending` by a failed extend (./demo-problems.ts) for the volume doctor to find.
 */
import type { DemoActivityStep, DemoPart, StartedDemoPart } from '../common/demo-backend';
import { OpenStackSimulator } from './index';
import { seedNovaActivity } from './demo-activity';
import { seedOpenStackProblems } from './demo-problems';

/**
 * The demo region's Keystone token for project `demo`, fixed so the README's examples work
 * verbatim. Real Keystone tokens are issued by `POST /v3/auth/tokens`; this one is minted by the
 * simulator's control side and lasts a year.
 */
export const DEMO_OPENSTACK_TOKEN = 'demo-openstack-token';

/** Id of the demo OpenStack backend. */
export const DEMO_OPENSTACK_BACKEND = 'openstack';

/** What the OpenStack demo part started: its Keystone and a token and password login of the `demo` user. */
export interface OpenStackDemoInfo {
  backend: string;
  keystoneUrl: string;
  token: string;
  username: string;
  password: string;
  project: string;
  projectId: string;
}

export const openStackDemo: DemoPart<OpenStackDemoInfo> = {
  serves: 'one OpenStack region',
  // The demo user's token changes only the demo project, as any member's would; the warning names management tokens.
  exposedTokens: [],
  async start({ activity }): Promise<StartedDemoPart<OpenStackDemoInfo>> {
    const os = new OpenStackSimulator({});
    const creds = os.seedDemo();
    const token = os.issueToken({
      user: creds.demo.username,
      project: creds.demo.project,
      ttlMs: 365 * 24 * 3_600_000,
      id: DEMO_OPENSTACK_TOKEN,
    });
    const { keystoneUrl, cinderUrl, novaUrl } = await os.listen();
    const steps: DemoActivityStep[] = [];
    try {
      await seedOpenStackProblems(os, { cinderUrl, projectId: creds.projects.demo, token });
    } catch (err) {
      await os.close();
      throw err;
    }
    if (activity) {
      try {
        const nova = seedNovaActivity(os, { project: creds.demo.project, novaUrl, token });
        steps.push({ name: `${DEMO_OPENSTACK_BACKEND} attach/detach`, run: (signal) => nova.step(signal) });
      } catch (err) {
        await os.close();
        throw err;
      }
    }
    const info: OpenStackDemoInfo = {
      backend: DEMO_OPENSTACK_BACKEND,
      keystoneUrl,
      token,
      username: creds.demo.username,
      password: creds.demo.password,
      project: creds.demo.project,
      projectId: creds.projects.demo,
    };
    return {
      backends: [
        {
          id: DEMO_OPENSTACK_BACKEND,
          kind: 'openstack',
          url: keystoneUrl,
          region: creds.region,
          interface: 'public',
          // The gateway's own credential (readiness probes only); callers send their own tokens.
          auth: {
            method: 'password',
            username: creds.admin.username,
            password: creds.admin.password,
            userDomainName: 'Default',
            projectName: creds.admin.project,
            projectDomainName: 'Default',
          },
        },
      ],
      // In the kind's shared header, as the README's examples send it.
      credentials: [
        {
          backend: DEMO_OPENSTACK_BACKEND,
          scope: 'kind',
          token,
          note: `Keystone token of user ${info.username}, project ${info.project}; demo only`,
        },
      ],
      notes: [
        {
          backend: DEMO_OPENSTACK_BACKEND,
          text: `Keystone at ${keystoneUrl} (user ${info.username}, password ${info.password})`,
        },
      ],
      steps,
      info,
      close: () => os.close(),
    };
  },
};
