/**
 * Shared setup of the Nomad watcher tests: a real simulator, a NomadBackend with a service token,
 * and a watcher whose deltas and statuses are recorded. Waits poll conditions, never fixed sleeps.
 */
import type { NomadBackendOptions } from '../../adapters/nomad/backend';
import type { NomadWatchTuning } from '../../adapters/nomad/watch';
import type { VolumeDelta, VolumeWatcher, WatcherStatus } from '../../adapters/contract/watch';
import type { NomadSimulatorOptions } from '../../simulators/nomad';
import { MGMT, startNomadBackend, type NomadUnderTest } from './nomad-helpers';
import { until } from '../support/until';

export interface WatchUnderTest extends NomadUnderTest {
  watcher: VolumeWatcher;
  deltas: VolumeDelta[];
  statuses: WatcherStatus[];
  /** Polls until `pred` holds (default 10 s). */
  until(pred: () => boolean, what: string, ms?: number): Promise<void>;
  /** The deltas of one volume id, in order. */
  of(id: string): VolumeDelta[];
}

export async function startWatch(
  opts: {
    sim?: NomadSimulatorOptions;
    tuning?: NomadWatchTuning;
    backend?: Partial<NomadBackendOptions>;
    seed?: (u: NomadUnderTest) => void;
    start?: boolean;
  } = {},
): Promise<WatchUnderTest> {
  const u = await startNomadBackend(opts.sim ?? {}, {
    token: MGMT,
    watch: { backoffMs: 50, maxBackoffMs: 200, ...opts.tuning },
    ...opts.backend,
  });
  opts.seed?.(u);
  const deltas: VolumeDelta[] = [];
  const statuses: WatcherStatus[] = [];
  const w = u.backend.createWatcher({ onDeltas: (d) => deltas.push(...d), onStatus: (s) => statuses.push(s) });
  if ('unavailable' in w) throw new Error(w.unavailable);
  if (opts.start !== false) w.start();
  const waitFor = (pred: () => boolean, what: string, ms = 10_000): Promise<void> =>
    until(pred, () => `${what}; status ${JSON.stringify(w.status())}`, ms, 10);
  return {
    ...u,
    watcher: w,
    deltas,
    statuses,
    until: waitFor,
    of: (id) => deltas.filter((d) => (d.after ?? d.before)!.ref.nativeId === id),
    async stop() {
      await w.stop();
      await u.stop();
    },
  };
}
