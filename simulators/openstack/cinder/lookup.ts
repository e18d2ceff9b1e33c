/** Visibility rules: a caller sees its project's resources; admins see every project's. */
import { ApiError } from '../http/fault';
import type { Snapshot, Volume } from '../model';
import type { CinderCtx } from './context';

export function canSee(ctx: CinderCtx, projectId: string): boolean {
  return ctx.auth.isAdmin || projectId === ctx.auth.projectId;
}

/** The volume, or Cinder's 404 (also for another project's volume). */
export function getVolume(ctx: CinderCtx, id: string): Volume {
  const v = ctx.state.volumes.get(id);
  if (!v || !canSee(ctx, v.projectId)) throw new ApiError(404, `Volume ${id} could not be found.`);
  return v;
}

export function getSnapshot(ctx: CinderCtx, id: string): Snapshot {
  const s = ctx.state.snapshots.get(id);
  if (!s || !canSee(ctx, s.projectId)) throw new ApiError(404, `Snapshot ${id} could not be found.`);
  return s;
}

export function visibleVolumes(ctx: CinderCtx): Volume[] {
  return [...ctx.state.volumes.values()].filter((v) => canSee(ctx, v.projectId));
}

export function inCallerProject(ctx: CinderCtx): (x: { projectId: string }) => boolean {
  return (x) => x.projectId === ctx.auth.projectId;
}
