/**
 * Runs one Nomad simulator standalone, seeded with the demo cluster.
 *
 *   PORT=4646 NOMAD_SIM_VARIANT=east node --import tsx simulators/nomad/main.ts
 *
 * `PORT` defaults to 4646 (Nomad's HTTP port), `NOMAD_SIM_VARIANT` to `east`; `HOST` to
 * 127.0.0.1; `NOMAD_SIM_EVENT_HEARTBEAT_MS` (the event stream's heartbeat, for fault tests with
 * short allowances) to the simulator's default. Prints the URL and the demo tokens; stops on
 * SIGINT/SIGTERM.
 */
import { NomadSimulator } from './index';
import { seedDemoCluster } from './demo';
import { runStandalone } from '../common/standalone';

async function main(): Promise<{ close(): Promise<void> }> {
  const variant = process.env.NOMAD_SIM_VARIANT === 'west' ? 'west' : 'east';
  const port = Number(process.env.PORT ?? 4646);
  const host = process.env.HOST ?? '127.0.0.1';
  const heartbeat = Number(process.env.NOMAD_SIM_EVENT_HEARTBEAT_MS);
  const sim = new NomadSimulator(Number.isInteger(heartbeat) && heartbeat > 0 ? { eventHeartbeatMs: heartbeat } : {});
  const tokens = seedDemoCluster(sim, variant);
  const url = await sim.listen(port, host);
  process.stdout.write(`nomad simulator (${variant}) listening on ${url}\n`);
  process.stdout.write(
    `  management token: ${tokens.managementToken}\n  analytics read-only token: ${tokens.readOnlyToken}\n`,
  );
  return sim;
}

runStandalone(main);
