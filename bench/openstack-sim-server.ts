/**
 * Benchmark backend: one simulated OpenStack region (Keystone, Cinder, Nova) with 100 volumes and
 * 40 servers, 60 volumes attached (3 to each of the first 20 servers), in its own process. Prints its URLs and a token.
 */
import { OpenStackSimulator } from '../simulators/openstack';

async function main(): Promise<void> {
  const sim = new OpenStackSimulator({});
  const project = sim.addProject({ name: 'bench' });
  sim.addUser({ name: 'bench', password: 'bench-secret', projects: { bench: ['member', 'reader'] } });
  const servers: string[] = [];
  for (let s = 0; s < 40; s++) servers.push(sim.seedServer({ project, name: `bench-server-${String(s).padStart(2, '0')}` }));
  for (let i = 0; i < 100; i++) {
    const id = sim.seedVolume({ project, name: `bench-${String(i).padStart(3, '0')}`, size: 10 });
    if (i < 60) sim.attachNow(servers[i % 20]!, id, { device: `/dev/vd${String.fromCharCode(98 + Math.floor(i / 20))}` });
  }
  const { keystoneUrl, cinderUrl, novaUrl } = await sim.listen();
  const token = sim.issueToken({ user: 'bench', project: 'bench' });
  // The project's endpoints, as the catalog lists them.
  console.log(`OS_URLS keystone=${keystoneUrl} cinder=${cinderUrl}/v3/${project} nova=${novaUrl}/v2.1 project=${project} token=${token}`);
  process.on('SIGTERM', () => void sim.close().then(() => process.exit(0)));
}

void main();
