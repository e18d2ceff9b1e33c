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
 * reported at the doctor's first pass rather than after Nomad's 11-minute default.
 */
export const DEMO_NOMAD_DIAGNOSIS = { stuckClaimMs: 0 } as const;

/** Makes the demo problem on a seeded east cluster (`seedDemoCluster(sim, 'east')` first). */
export function seedNomadProblems(sim: Pick<NomadSimulator, 'failAllocation'>): void {
  sim.failAllocation(DEMO_STUCK_CLAIM.allocationId, { holdClaims: true });
}
