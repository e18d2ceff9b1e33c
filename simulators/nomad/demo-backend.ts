/**
 * Nomad's part of demo mode: two simulated clusters, `nomad-east` and `nomad-west`, seeded with
 * the demo data (./demo.ts), each served with its management token. With activity on, `nomad-east`'s
 * `build-cache` volume is claimed and released (./demo-activity.ts); west has none, as the README
 * shows west's volumes with their exact status. East also has a claim a failed allocation left on
 * `grafana` (./demo-problems.ts) for the volume doctor to find, with a stuck-claim threshold of 0.5 s.
 */
import type {
  DemoActivityStep,
  DemoBackendEntry,
  DemoCredential,
  DemoPart,
  StartedDemoPart,
} from '../common/demo-backend';
import { NomadSimulator } from './index';
import { demoNodeIds, demoTokens, seedDemoCluster } from './demo';
import { seedNomadActivity } from './demo-activity';
import { DEMO_NOMAD_DIAGNOSIS, seedNomadProblems } from './demo-problems';

/** The demo clusters, in the order the gateway lists them. */
const VARIANTS = ['east', 'west'] as const;

/** Backend id of a demo cluster. */
const backendId = (variant: (typeof VARIANTS)[number]): string => `nomad-${variant}`;

/** What the Nomad demo part started. */
export interface NomadDemoInfo {
  /** Tokens a demo user can send, per backend id (printed at start; demo data only). */
  tokens: Record<string, { management: string; readOnly: string }>;
}

export const nomadDemo: DemoPart<NomadDemoInfo> = {
  serves: 'two simulated Nomad clusters',
  exposedTokens: VARIANTS.map((v) => demoTokens(v).managementToken),
  async start({ activity }): Promise<StartedDemoPart<NomadDemoInfo>> {
    const sims: NomadSimulator[] = [];
    const close = async (): Promise<void> => {
      await Promise.all(sims.map((s) => s.close()));
    };
    try {
      const backends: DemoBackendEntry[] = [];
      const credentials: DemoCredential[] = [];
      const tokens: NomadDemoInfo['tokens'] = {};
      const steps: DemoActivityStep[] = [];
      for (const variant of VARIANTS) {
        // Anonymous callers may read every namespace, so the README's queries work without a token;
        // writes need the printed management token, as on a real cluster with ACLs.
        const sim = new NomadSimulator({ acl: { enabled: true, anonymousRead: '*' } });
        const t = seedDemoCluster(sim, variant);
        const id = backendId(variant);
        if (variant === 'east') await seedNomadProblems(sim);
        if (activity && variant === 'east') {
          const nomad = seedNomadActivity(sim, {
            nodeIds: demoNodeIds(variant),
            plugin: 'aws-ebs0',
            externalId: 'vol-0e45000000000a0ff',
            idPrefix: 'e0a1ac00-0000-4000-8000-0000',
          });
          steps.push({ name: `${id} claim/release`, run: () => nomad.step() });
        }
        const url = await sim.listen(0, '127.0.0.1');
        sims.push(sim);
        backends.push({
          id,
          kind: 'nomad',
          url,
          token: t.managementToken,
          // The demo's own doctor threshold, so its problem shows at the first pass (defaults: minutes).
          ...(variant === 'east' ? { diagnosis: { ...DEMO_NOMAD_DIAGNOSIS } } : {}),
        });
        credentials.push({ backend: id, scope: 'backend', token: t.managementToken, note: 'management, demo only' });
        tokens[id] = { management: t.managementToken, readOnly: t.readOnlyToken };
      }
      return { backends, credentials, steps, info: { tokens }, close };
    } catch (err) {
      await close();
      throw err;
    }
  },
};
