/**
 * The demo's Nomad problem, so the volume doctor has something to show right after start-up: on
 * `nomad-east`, the `grafana` job's allocation fails and the volume watcher's release of its write
 * claim fails with it (./failures.ts `failAllocation` with `holdClaims`, what
 * hashicorp/nomad#10927 and #15415 report). The claim stays on volume `grafana`, still counted, so
 * Nomad refuses a new writer: a STUCK_CLAIM once the backend's `diagnosis.stuckClaimMs` has passed
 * (the demo sets it to {@link DEMO_NOMAD_DIAGNOSIS}; real deployments keep the default, minutes).
 */
import type { NomadSimulator } from './index';

/** The allocation that fails holding its claim, and the volume it holds (demo data of ./demo.ts). */
export const DEMO_STUCK_CLAIM = {
  allocationId: 'e0a10c00-0000-4000-8000-000000000003',
  volumeId: 'grafana',
  namespace: 'default',
} as const;

/**
 * The demo cluster's doctor thresholds (its backend's `diagnosis` settings): a held claim is
 * reported after half a second rather than Nomad's 11-minute default. Not 0: the demo activity's
 * own allocations hold their claims for a moment after they complete (the simulated volume
 * watcher releases them in the next tick, as Nomad's does asynchronously), and a threshold of 0
 * would report that moment as a problem.
 */
export const DEMO_NOMAD_DIAGNOSIS = { stuckClaimMs: 500 } as const;

/**
 * Makes the demo problem on a seeded east cluster (`seedDemoCluster(sim, 'east')` first) and
 * resolves once the claim has outlived its allocation by {@link DEMO_NOMAD_DIAGNOSIS}, so the
 * doctor's first pass reports it however fast the gateway starts (the doctor checks again only at
 * its next pass, a minute later by default).
 */
export async function seedNomadProblems(sim: Pick<NomadSimulator, 'failAllocation'>): Promise<void> {
  const failedAt = Date.now();
  sim.failAllocation(DEMO_STUCK_CLAIM.allocationId, { holdClaims: true });
  const wait = failedAt + DEMO_NOMAD_DIAGNOSIS.stuckClaimMs - Date.now();
  if (wait > 0) await new Promise((r) => setTimeout(r, wait));
}
