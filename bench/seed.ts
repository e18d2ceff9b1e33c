/**
 * The benchmark's data, shared by its simulator processes and the test that checks its queries:
 * Nomad with 100 CSI volumes, every fifth claimed by a running allocation; one OpenStack project
 * with 100 volumes and 40 servers, 60 volumes attached (3 to each of the first 20 servers).
 */
import type { NomadSimulator } from '../simulators/nomad';
import type { OpenStackSimulator } from '../simulators/openstack';
import { BENCH_TOKEN } from './constants';

/** A bench volume of the Nomad simulator (`seedVolume`, or `POST /_sim/volumes`): 10 GiB, plugin aws-ebs0, namespace default. */
export function nomadBenchVolume(id: string): Record<string, unknown> {
  return {
    ID: id,
    Name: id,
    Namespace: 'default',
    PluginID: 'aws-ebs0',
    ExternalID: `vol-${id}`,
    Capacity: 10737418240,
    RequestedCapabilities: [{ AccessMode: 'single-node-writer', AttachmentMode: 'file-system' }],
  };
}

/** Seeds the Nomad benchmark cluster; `volumes` beyond the usual 100 for the take-over measurement (bench/replicas.ts). */
export function seedNomadBench(sim: NomadSimulator, volumes = 100): void {
  sim.addToken({ secret: BENCH_TOKEN, management: true });
  sim.addNode({ id: 'node-bench-1', name: 'bench-1' });
  sim.addPlugin({
    id: 'aws-ebs0',
    provider: 'ebs.csi.aws.com',
    version: 'v1.38.1',
    controllerRequired: true,
    controllersHealthy: 1,
    controllersExpected: 1,
    nodesHealthy: 1,
    nodesExpected: 1,
  });
  for (let i = 0; i < volumes; i++) {
    const id = `bench-${String(i).padStart(3, '0')}`;
    sim.seedVolume(nomadBenchVolume(id));
    if (i % 5 === 0) {
      sim.placeAllocation({
        jobId: `job-${i}`,
        nodeId: 'node-bench-1',
        volumes: [{ volumeId: id, mode: 'write', accessMode: 'single-node-writer', attachmentMode: 'file-system' }],
      });
    }
  }
}

/** Returns the project id; the user `bench` (password `bench-secret`) is a member. */
export function seedOpenStackBench(sim: OpenStackSimulator): string {
  const project = sim.addProject({ name: 'bench' });
  sim.addUser({ name: 'bench', password: 'bench-secret', projects: { bench: ['member', 'reader'] } });
  const servers: string[] = [];
  for (let s = 0; s < 40; s++)
    servers.push(sim.seedServer({ project, name: `bench-server-${String(s).padStart(2, '0')}` }));
  for (let i = 0; i < 100; i++) {
    const id = sim.seedVolume({ project, name: `bench-${String(i).padStart(3, '0')}`, size: 10 });
    if (i < 60)
      sim.attachNow(servers[i % 20]!, id, { device: `/dev/vd${String.fromCharCode(98 + Math.floor(i / 20))}` });
  }
  return project;
}
