/**
 * Reads with gateway logic: a volume that must exist, a list stub completed by a full read, the
 * merged list across backends (its full volumes prime the loader), an attachment within its volume.
 */
import { NotFoundError } from '../adapters/contract/errors';
import type { Attachment, Volume, VolumeRef } from '../adapters/contract/model';
import { mergeVolumePages, type Connection, type ListCursor, type MergedListRequest } from '../adapters/listing';
import type { GatewayContext } from './context';

/** A volume by ref through the execution's loader; null when it does not exist. */
export const getVolume = (ctx: GatewayContext, ref: VolumeRef): Promise<Volume | null> => ctx.loaders.volume.load(ref);

/** A volume that must exist. */
export async function requireVolume(ctx: GatewayContext, ref: VolumeRef): Promise<Volume> {
  const v = await ctx.loaders.volume.load(ref);
  if (!v)
    throw new NotFoundError(
      `volume "${ref.nativeId}" in namespace "${ref.namespace}" does not exist on backend "${ref.backend}"`,
      { backend: ref.backend },
    );
  return v;
}

/** The volume with everything a full read has (itself when it came from one). */
export const completeVolume = (ctx: GatewayContext, v: Volume): Promise<Volume> =>
  v.complete ? Promise.resolve(v) : requireVolume(ctx, v.ref);

/** What {@link listVolumesAcrossBackends} is asked. */
export interface VolumesAcrossBackends {
  /** The backends to list, in order. */
  backends: MergedListRequest['backends'];
  /** The checked query every backend gets. */
  query: MergedListRequest['query'];
  /** Keep only these statuses. @default all */
  statuses?: ReadonlySet<Volume['status']> | null;
  /** The checked page size. */
  first: number;
  /** The decoded cursor of the page before, if any. */
  after: ListCursor | null;
}

/**
 * The volume list use case: one page merged across the asked backends (a backend that fails or lacks
 * a credential is an omission), filtered by status, its full volumes primed into the loader.
 */
export async function listVolumesAcrossBackends(
  ctx: GatewayContext,
  input: VolumesAcrossBackends,
): Promise<Connection<Volume>> {
  const statuses = input.statuses;
  const result = await mergeVolumePages({
    backends: input.backends,
    query: input.query,
    keep: statuses ? (v) => statuses.has(v.status) : undefined,
    first: input.first,
    after: input.after,
    callFor: (id) => ctx.call(id),
    backendDeadlineMs: ctx.registry.listBackendDeadlineMs,
  });
  // Full volumes go into the loader, so a detail read never repeats the list's work.
  for (const e of result.edges) if (e.node.complete) ctx.loaders.volume.prime(e.node.ref, e.node);
  return result;
}

/** An attachment within its volume; null when the volume, claim or attachment is gone. */
export async function attachmentOf(
  ctx: GatewayContext,
  volume: VolumeRef,
  consumerId: string,
): Promise<Attachment | null> {
  const v = await ctx.loaders.volume.load(volume);
  return v?.attachments.find((a) => a.consumerId === consumerId) ?? null;
}
