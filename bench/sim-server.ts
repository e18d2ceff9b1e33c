/**
 * Benchmark backend: one simulated Nomad cluster with 100 volumes (BENCH_NOMAD_VOLUMES), every fifth claimed, in its own
 * process so the gateway and the load generator do not share its event loop.
 */
import { NomadSimulator } from '../simulators/nomad';
import { seedNomadBench } from './seed';

async function main(): Promise<void> {
  const sim = new NomadSimulator({ acl: { enabled: true } });
  seedNomadBench(sim, Number(process.env.BENCH_NOMAD_VOLUMES ?? 100));
  const url = await sim.listen(0, '127.0.0.1');
  console.log(`SIM_URL=${url}`);
  process.on('SIGTERM', () => void sim.close().then(() => process.exit(0)));
}

void main();
