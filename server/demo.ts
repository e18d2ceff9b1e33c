/**
 * Demo mode: with no backends configured, the gateway starts two simulated Nomad clusters
 * (`nomad-east`, `nomad-west`) with demo data on loopback and serves them.
 */
import { NomadSimulator } from '../simulators/nomad';
import { seedDemoCluster } from '../simulators/nomad/demo';
import type { BackendConfig } from './config';

export interface DemoBackends {
  backends: BackendConfig[];
  /** Tokens a demo user can send (printed at start; demo data only). */
  tokens: Record<string, { management: string; readOnly: string }>;
  stop(): Promise<void>;
}

export async function startDemoBackends(): Promise<DemoBackends> {
  const sims: NomadSimulator[] = [];
  const backends: BackendConfig[] = [];
  const tokens: DemoBackends['tokens'] = {};
  for (const variant of ['east', 'west'] as const) {
    // Anonymous callers may read every namespace, so the README's queries work without a token;
    // writes need the printed management token, as on a real cluster with ACLs.
    const sim = new NomadSimulator({ acl: { enabled: true, anonymousRead: '*' } });
    const t = seedDemoCluster(sim, variant);
    const url = await sim.listen(0, '127.0.0.1');
    sims.push(sim);
    const id = `nomad-${variant}`;
    backends.push({ id, kind: 'nomad', url, token: t.managementToken, timeoutMs: 10_000, maxConnections: 16, readRetries: 2 });
    tokens[id] = { management: t.managementToken, readOnly: t.readOnlyToken };
  }
  return { backends, tokens, stop: async () => void (await Promise.all(sims.map((s) => s.close()))) };
}
