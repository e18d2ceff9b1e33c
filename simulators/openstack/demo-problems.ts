/**
 * The demo's OpenStack problem, so the volume doctor has something to show right after start-up:
 * the demo user grows volume `web-1-logs` (attached to `web-1`) through Cinder's API
 * (`os-extend`, microversion 3.42 for an in-use volume) and the storage driver fails the extend
 * (./faults.ts `failNextExtend`): Cinder leaves the volume `error_extending` with an EXTEND_VOLUME
 * user message, as cinder/volume/manager.py `extend_volume` does when the driver raises. An
 * ERROR_STATE has no threshold: the doctor reports it at its first pass.
 */
import type { OpenStackSimulator } from './index';

const vol = (n: number): string => `d0000000-0000-4000-8000-${String(n).padStart(12, '0')}`;

/** The volume whose extend fails (demo data of ./demo.ts) and the size asked for, GiB. */
export const DEMO_FAILED_EXTEND = { volumeId: vol(4), volumeName: 'web-1-logs', newSize: 4 } as const;

/** Failure of the demo's extend request. */
export class DemoProblemError extends Error {
  readonly code = 'DEMO_PROBLEM_FAILED';
  constructor(message: string) {
    super(message);
    this.name = 'DemoProblemError';
  }
}

/**
 * Makes the demo problem on a seeded, listening region (`seedDemo` and `listen` first): the
 * extend is asked over HTTP with `token` (project `projectId`), and this resolves once Cinder
 * shows the volume `error_extending` (after the simulator's `extendMs`).
 * @throws DemoProblemError when Cinder refuses the extend or the volume does not reach error_extending within 5 s
 */
export async function seedOpenStackProblems(
  sim: Pick<OpenStackSimulator, 'failNextExtend' | 'volume'>,
  o: { cinderUrl: string; projectId: string; token: string },
): Promise<void> {
  const { volumeId, newSize } = DEMO_FAILED_EXTEND;
  sim.failNextExtend(volumeId);
  const res = await fetch(`${o.cinderUrl}/v3/${o.projectId}/volumes/${volumeId}/action`, {
    method: 'POST',
    headers: {
      'x-auth-token': o.token,
      'content-type': 'application/json',
      accept: 'application/json',
      'openstack-api-version': 'volume 3.42',
    },
    body: JSON.stringify({ 'os-extend': { new_size: newSize } }),
  });
  if (res.status !== 202)
    throw new DemoProblemError(`Cinder os-extend answered ${res.status}: ${(await res.text()).slice(0, 200)}`);
  await res.arrayBuffer().catch(() => undefined);
  for (let waited = 0; sim.volume(volumeId)?.status !== 'error_extending'; waited += 20) {
    if (waited >= 5_000) throw new DemoProblemError(`volume ${volumeId} did not reach error_extending`);
    await new Promise((r) => setTimeout(r, 20));
  }
}
