/**
 * The demo's texts as a newcomer sees them: the start banner, the headers GraphiQL and /live are
 * pre-filled with, and the exposure warning. server/demo.ts composes them from the demo parts
 * (simulators/<kind>/demo-backend.ts) and the header names from the kinds' modules; these are the
 * texts the README and the docs show, so they must not move when the parts change shape.
 */
import { demoExposureWarning, startDemoBackends, type DemoBackends } from '../../server/demo';

describe('demo texts', () => {
  let demo: DemoBackends;
  beforeAll(async () => {
    demo = await startDemoBackends({ activity: false });
  });
  afterAll(async () => {
    await demo?.stop();
  });

  it('should print what it serves and each credential with its header, the region token in the shared header', () => {
    const keystone = demo.kinds.openstack.keystoneUrl;
    expect(keystone).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/v3$/);
    expect(demo.banner).toEqual([
      'Demo mode: serving two simulated Nomad clusters and one OpenStack region with demo data.',
      '  nomad-east: X-Nomad-Token-nomad-east: demo-east-management   (management, demo only)',
      '  nomad-west: X-Nomad-Token-nomad-west: demo-west-management   (management, demo only)',
      '  openstack: X-Auth-Token: demo-openstack-token   (Keystone token of user demo, project demo; demo only)',
      `  openstack: Keystone at ${keystone} (user demo, password demo-secret)`,
    ]);
  });

  it('should pre-fill the shared header first, then the per-backend ones, in GraphiQL as in the headers', () => {
    expect(Object.entries(demo.headers)).toEqual([
      ['X-Auth-Token', 'demo-openstack-token'],
      ['X-Nomad-Token-nomad-east', 'demo-east-management'],
      ['X-Nomad-Token-nomad-west', 'demo-west-management'],
    ]);
    expect(demo.graphiqlHeaders).toBe(
      '{\n  // Demo credentials (demo data only): your own tokens go here against real backends.\n  "X-Auth-Token": "demo-openstack-token",\n  "X-Nomad-Token-nomad-east": "demo-east-management",\n  "X-Nomad-Token-nomad-west": "demo-west-management"\n}',
    );
  });

  it('should serve its backends with the common settings and start no activity when told not to', () => {
    expect(demo.backends.map((b) => [b.id, b.kind, b.timeoutMs, b.maxConnections, b.readRetries])).toEqual([
      ['nomad-east', 'nomad', 10_000, 16, 2],
      ['nomad-west', 'nomad', 10_000, 16, 2],
      ['openstack', 'openstack', 10_000, 16, 2],
    ]);
    expect(demo.activity).toBeUndefined();
    expect(demo.kinds.nomad.tokens).toEqual({
      'nomad-east': { management: 'demo-east-management', readOnly: 'demo-east-analytics-read' },
      'nomad-west': { management: 'demo-west-management', readOnly: 'demo-west-analytics-read' },
    });
  });

  it('should name the management tokens in the exposure warning', () => {
    expect(demoExposureWarning('0.0.0.0')).toBe(
      "WARNING: demo mode is listening on 0.0.0.0 (HOST), not only on loopback: anyone who can reach this port gets the GraphiQL page and with it the demo's management tokens (demo-east-management, demo-west-management), and can change the demo data. Unset HOST (or HOST=127.0.0.1) to keep the demo on this machine.",
    );
  });
});
