/**
 * Cinder's project quotas, enforced only where set (`OpenStackSimulator.setQuota`). A reservation
 * over quota raises the QuotaError subclasses of cinder/exception.py, which reach the fault
 * middleware (cinder/api/middleware/fault.py) as `413 overLimit` with the text
 * `<ExceptionName>: <message>`, a `Retry-After: 0` header and `"retryAfter": "0"` in the body
 * (openstack/cinder cinder/api/openstack/wsgi.py `Fault`). Checks come where Cinder reserves: after
 * the request's own validation. Usage counts every stored volume and snapshot of the project
 * (snapshots use gigabytes too, Cinder's default `no_snapshot_gb_quota = False`);
 * cinder/quota_utils.py picks the exception, gigabytes first (the over-list is sorted).
 */
import { ApiError } from '../http/fault';
import type { SimState } from '../state';

/** Per-project limits; an absent or negative value is unlimited, as in Cinder. */
export interface QuotaLimits {
  volumes?: number;
  gigabytes?: number;
  snapshots?: number;
}

/** Cinder's QuotaError header value. */
const RETRY_AFTER = '0';

function usage(state: SimState, projectId: string): { volumes: number; snapshots: number; gigabytes: number } {
  const vols = [...state.volumes.values()].filter((v) => v.projectId === projectId);
  const snaps = [...state.snapshots.values()].filter((s) => s.projectId === projectId);
  return {
    volumes: vols.length,
    snapshots: snaps.length,
    gigabytes: vols.reduce((n, v) => n + v.size, 0) + snaps.reduce((n, s) => n + s.size, 0),
  };
}

const over = (limit: number | undefined, used: number, delta: number): limit is number =>
  limit !== undefined && limit >= 0 && used + delta > limit;

function gigabytesError(requested: number, quota: number, consumed: number): ApiError {
  return new ApiError(
    413,
    `VolumeSizeExceedsAvailableQuota: Requested volume or snapshot exceeds allowed gigabytes quota. Requested ${requested}G, quota is ${quota}G and ${consumed}G has been consumed.`,
    RETRY_AFTER,
  );
}

/** Reserving one more volume of `size` GiB (create). */
export function reserveVolume(state: SimState, projectId: string, size: number): void {
  const q = state.quotas.get(projectId);
  if (!q) return;
  const u = usage(state, projectId);
  if (over(q.gigabytes, u.gigabytes, size)) throw gigabytesError(size, q.gigabytes, u.gigabytes);
  if (over(q.volumes, u.volumes, 1))
    throw new ApiError(
      413,
      `VolumeLimitExceeded: Maximum number of volumes allowed (${q.volumes}) exceeded for quota 'volumes'.`,
      RETRY_AFTER,
    );
}

/** Reserving one more snapshot of a `size` GiB volume. */
export function reserveSnapshot(state: SimState, projectId: string, size: number): void {
  const q = state.quotas.get(projectId);
  if (!q) return;
  const u = usage(state, projectId);
  if (over(q.gigabytes, u.gigabytes, size)) throw gigabytesError(size, q.gigabytes, u.gigabytes);
  if (over(q.snapshots, u.snapshots, 1))
    throw new ApiError(
      413,
      `SnapshotLimitExceeded: Maximum number of snapshots allowed (${q.snapshots}) exceeded`,
      RETRY_AFTER,
    );
}

/** Reserving `increase` more GiB (extend). */
export function reserveGigabytes(state: SimState, projectId: string, increase: number): void {
  const q = state.quotas.get(projectId);
  if (!q) return;
  const u = usage(state, projectId);
  if (over(q.gigabytes, u.gigabytes, increase)) throw gigabytesError(increase, q.gigabytes, u.gigabytes);
}
