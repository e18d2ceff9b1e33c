/**
 * Benchmark backend: one simulated OpenStack region (Keystone, Cinder, Nova) with 100 volumes and
 * 40 servers, 60 volumes attached (3 to each of the first 20 servers), in its own process. Prints its URLs and a token.
 */
import { OpenStackSimulator } from '../simulators/openstack';
import { seedOpenStackBench } from './seed';

async function main(): Promise<void> {
  const sim = new OpenStackSimulator({});
  const project = seedOpenStackBench(sim);
  const { keystoneUrl, cinderUrl, novaUrl } = await sim.listen();
  const token = sim.issueToken({ user: 'bench', project: 'bench' });
  // The project's endpoints, as the catalog lists them.
  console.log(
    `OS_URLS keystone=${keystoneUrl} cinder=${cinderUrl}/v3/${project} nova=${novaUrl}/v2.1 project=${project} token=${token}`,
  );
  process.on('SIGTERM', () => void sim.close().then(() => process.exit(0)));
}

void main();
