/**
 * Benchmark backend: one simulated Nomad cluster with 100 volumes, 20 of them claimed, in its own
 * process so the gateway and the load generator do not share its event loop.
 */
import { NomadSimulator } from '../simulators/nomad';

import { BENCH_TOKEN } from './constants';

async function main(): Promise<void> {
  const sim = new NomadSimulator({ acl: { enabled: true } });
  sim.addToken({ secret: BENCH_TOKEN, management: true });
  sim.addNode({ id: 'node-bench-1', name: 'bench-1' });
  sim.addPlugin({ id: 'aws-ebs0', provider: 'ebs.csi.aws.com', version: 'v1.38.1', controllerRequired: true, controllersHealthy: 1, controllersExpected: 1, nodesHealthy: 1, nodesExpected: 1 });
  for (let i = 0; i < 100; i++) {
    const id = `bench-${String(i).padStart(3, '0')}`;
    sim.seedVolume({
      ID: id, Name: id, Namespace: 'default', PluginID: 'aws-ebs0', ExternalID: `vol-${id}`, Capacity: 10737418240,
      RequestedCapabilities: [{ AccessMode: 'single-node-writer', AttachmentMode: 'file-system' }],
    });
    if (i % 5 === 0) {
      sim.placeAllocation({ jobId: `job-${i}`, nodeId: 'node-bench-1', volumes: [{ volumeId: id, mode: 'write', accessMode: 'single-node-writer', attachmentMode: 'file-system' }] });
    }
  }
  const url = await sim.listen(0, '127.0.0.1');
  console.log(`SIM_URL=${url}`);
  process.on('SIGTERM', () => void sim.close().then(() => process.exit(0)));
}

void main();
