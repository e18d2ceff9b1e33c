/**
 * Runs the OpenStack simulator standalone, seeded with the demo cloud.
 *
 *   KEYSTONE_PORT=5000 CINDER_PORT=8776 NOVA_PORT=8774 node --import tsx simulators/openstack/main.ts
 *
 * Ports default to OpenStack's (5000, 8776, 8774), `HOST` to 127.0.0.1, `OS_REGION` to RegionOne.
 * Prints the URLs and the demo credentials; stops on SIGINT/SIGTERM.
 */
import { OpenStackSimulator } from './index';
import { runStandalone } from '../common/standalone';

async function main(): Promise<{ close(): Promise<void> }> {
  const port = (name: string, fallback: number): number => Number(process.env[name] ?? fallback);
  const sim = new OpenStackSimulator({ region: process.env.OS_REGION ?? 'RegionOne' });
  const creds = sim.seedDemo();
  const urls = await sim.listen(process.env.HOST ?? '127.0.0.1', {
    keystone: port('KEYSTONE_PORT', 5000),
    cinder: port('CINDER_PORT', 8776),
    nova: port('NOVA_PORT', 8774),
  });
  const out = [
    `openstack simulator listening`,
    `  keystone (OS_AUTH_URL): ${urls.keystoneUrl}`,
    `  cinder:                 ${urls.cinderUrl}/v3/<project_id>`,
    `  nova:                   ${urls.novaUrl}/v2.1`,
    `  region ${creds.region}, domain ${creds.domain}`,
    `  demo user:  ${creds.demo.username} / ${creds.demo.password} (project ${creds.demo.project} ${creds.projects.demo})`,
    `  admin user: ${creds.admin.username} / ${creds.admin.password} (project ${creds.admin.project})`,
    `  application credential: id ${creds.applicationCredential.id} secret ${creds.applicationCredential.secret}`,
  ];
  process.stdout.write(`${out.join('\n')}\n`);
  return sim;
}

runStandalone(main);
