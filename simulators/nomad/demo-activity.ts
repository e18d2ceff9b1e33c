/**
 * Demo activity on a simulated Nomad cluster: a batch job's allocation claims a dedicated volume,
 * runs, finishes (its claim is released by the simulated volume watcher, as Nomad's is) and is
 * garbage-collected before the next one is placed, the way a scheduler would drive it. The volume
 * is the activity's own (`build-cache` in namespace `default`), so the demo data the README shows
 * never changes under it.
 */
import type { NomadSimulator } from './index';

const GiB = 1024 * 1024 * 1024;

/** The volume the activity claims and releases; seeded by {@link seedNomadActivity}. */
export const ACTIVITY_VOLUME = { namespace: 'default', id: 'build-cache', name: 'build cache' } as const;
/** Job and task group of the activity's allocations. */
export const ACTIVITY_JOB = { jobId: 'ci-runner', taskGroup: 'build' } as const;

/** What the activity needs from the simulator: its seeding and scheduler-side methods. */
type ActivityTarget = Pick<NomadSimulator, 'seedVolume' | 'placeAllocation' | 'setAllocationStatus' | 'gcAllocation'>;

export interface NomadActivity {
  /** Places a claiming allocation when none runs, else finishes the running one. Returns what it did. */
  step(): 'claimed' | 'released';
}

/**
 * Seeds the activity's volume into a demo cluster (`seedDemoCluster` first) and returns its step.
 * @param nodeIds client nodes the allocations rotate over (at least one)
 * @param idPrefix the first 28 characters of allocation ids (a counter fills the last 8 hex digits)
 */
export function seedNomadActivity(
  sim: ActivityTarget,
  o: { nodeIds: string[]; plugin: string; externalId?: string; idPrefix: string },
): NomadActivity {
  if (o.nodeIds.length === 0) throw new Error('demo activity needs at least one node');
  sim.seedVolume({
    ID: ACTIVITY_VOLUME.id,
    Name: ACTIVITY_VOLUME.name,
    Namespace: ACTIVITY_VOLUME.namespace,
    PluginID: o.plugin,
    ...(o.externalId ? { ExternalID: o.externalId } : {}),
    RequestedCapacityMin: 4 * GiB,
    Capacity: 4 * GiB,
    RequestedCapabilities: [{ AccessMode: 'single-node-writer', AttachmentMode: 'file-system' }],
  });
  let count = 0;
  let running: string | undefined;
  let finished: string | undefined;
  return {
    step() {
      if (running) {
        // The job is done: the client reports it complete and the volume watcher frees the claim.
        sim.setAllocationStatus(running, { clientStatus: 'complete' });
        finished = running;
        running = undefined;
        return 'released';
      }
      // Nomad's GC removes finished allocations; doing it here keeps the allocation table small.
      const done = finished;
      finished = undefined;
      if (done) sim.gcAllocation(done);
      count++;
      const id = `${o.idPrefix}${count.toString(16).padStart(8, '0')}`;
      running = sim.placeAllocation({
        id,
        namespace: ACTIVITY_VOLUME.namespace,
        ...ACTIVITY_JOB,
        name: `${ACTIVITY_JOB.jobId}.${ACTIVITY_JOB.taskGroup}[0]`,
        nodeId: o.nodeIds[(count - 1) % o.nodeIds.length]!,
        volumes: [{ volumeId: ACTIVITY_VOLUME.id, mode: 'write' }],
      });
      return 'claimed';
    },
  };
}
