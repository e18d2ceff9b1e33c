/**
 * Cinder volumes: list, read, create, update, delete and extend, in the caller's project. The
 * asynchronous ones return their completion rule (`completion/rules.ts`).
 */
import type { Accepted, BackendPage } from '../../contract/call-answers';
import type { CallOptions } from '../../contract/call-options';
import type { DeleteVolumeOptions, VolumeListQuery, VolumeSpec } from '../../contract/call-inputs';
import type { VolumePatch } from '../../contract/capabilities';
import { BadUserInputError, inputField, NotFoundError } from '../../contract/errors';
import type { Volume, VolumeRef } from '../../contract/model';
import * as req from '../cinder/requests';
import { GIB, nextMarker, toVolume, toVolumeFacts, type CinderVolume } from '../cinder/results';
import { rules } from '../completion/rules';
import { orNull, pending, type OpenStackContext } from '../context';
import { checkedUuid, UUID } from '../ids';
import { MAX_LIMIT, marker, positioned } from '../paging';
import { cinderPart, CREATE_PART, deleteOptions, listsByPlugin } from './input';

/** `listVolumes` of the OpenStack backend: one page of Cinder's list-detail, details included. */
export async function volumePage(
  ctx: OpenStackContext,
  q: VolumeListQuery,
  o: CallOptions,
): Promise<BackendPage<Volume>> {
  const session = await ctx.client.session(o);
  // A token sees its own project; node and plugin are Nomad notions with no Cinder match.
  if ((q.namespace !== '*' && q.namespace !== session.projectId) || q.node || listsByPlugin(q))
    return { items: [], next: null };
  const from = marker(q.token);
  const { data } = await req.listVolumesDetail(
    ctx.client,
    { limit: Math.min(q.limit, MAX_LIMIT), marker: from, filters: req.volumeFilters({ name: q.name }) },
    o,
  );
  const list = data?.volumes ?? [];
  const volumes = list.map((v) => toVolume(ctx.backend, session.projectId, v));
  // Cinder links a full final page too; the merged listing's extra item makes hasNextPage exact.
  return {
    items: positioned(
      volumes,
      volumes.map((v) => v.ref.nativeId),
      from,
    ),
    next: nextMarker(list, data?.volumes_links),
  };
}

/** Cinder's view of one volume; null when it does not exist for the caller. */
export function showVolume(ctx: OpenStackContext, id: string, o: CallOptions): Promise<CinderVolume | null> {
  // Cinder ids are UUIDs: anything else cannot exist.
  if (!UUID.test(id)) return Promise.resolve(null);
  return orNull(req.showVolume(ctx.client, id, o)).then((r) => r?.data?.volume ?? null);
}

export async function getVolume(ctx: OpenStackContext, ref: VolumeRef, o: CallOptions): Promise<Volume | null> {
  const v = await showVolume(ctx, ref.nativeId, o);
  return v ? toVolume(ctx.backend, ref.namespace, v) : null;
}

/** Whole GiB within [min, max] bytes (Cinder counts in GiB): the smallest, or the largest under a lone max. */
function sizeGiB(min: number | undefined, max: number | undefined): number | undefined {
  if (min === undefined && max === undefined) return undefined;
  const gib = min !== undefined ? Math.max(1, Math.ceil(min / GIB)) : Math.floor(max! / GIB);
  if (gib < 1 || (max !== undefined && gib * GIB > max)) {
    throw BadUserInputError.atField(
      'maxSizeBytes',
      (name) =>
        `Cinder sizes are whole GiB (at least 1): no whole GiB lies between ${name('sizeBytes')} and ${name('maxSizeBytes')}`,
    );
  }
  return gib;
}

export async function createVolume(
  ctx: OpenStackContext,
  spec: VolumeSpec,
  o: CallOptions,
): Promise<Accepted<VolumeRef>> {
  const c = cinderPart(spec.own, ctx.backend);
  const session = await ctx.client.session(o);
  if (spec.namespace !== 'default' && spec.namespace !== session.projectId) {
    throw BadUserInputError.atField(
      'namespace',
      (name) =>
        `volumes are created in the caller's project (${session.projectId}); ${name('namespace')} names another`,
    );
  }
  // Unreachable through GraphQL (a native id comes only in another kind's part), kept for other callers of the contract.
  if (spec.nativeId !== undefined)
    throw BadUserInputError.atField('', () => 'Cinder chooses volume ids: give no native id');
  const input: req.CreateVolumeInput = {
    name: spec.name,
    sizeGiB: sizeGiB(spec.capacityMinBytes, spec.capacityMaxBytes),
    description: spec.description,
    metadata: spec.metadata,
  };
  if (c.volumeType !== undefined) input.volumeType = c.volumeType;
  if (c.availabilityZone !== undefined) input.availabilityZone = c.availabilityZone;
  if (c.snapshotId !== undefined) input.snapshotId = c.snapshotId;
  if (c.sourceVolumeId !== undefined) input.sourceVolumeId = c.sourceVolumeId;
  if (input.sizeGiB === undefined && !input.snapshotId && !input.sourceVolumeId) {
    throw BadUserInputError.atField(
      'sizeBytes',
      (name) =>
        `creating an OpenStack volume needs ${name('sizeBytes')} or ${name('sizeGiB')} (or ${name(`${CREATE_PART}.snapshotId`)} or sourceVolumeId)`,
    );
  }
  const { data, requestId } = await req.createVolume(ctx.client, input, o);
  const id = data?.volume.id;
  if (!id)
    throw new NotFoundError(`backend "${ctx.backend}" reported no volume after create`, { backend: ctx.backend });
  return {
    result: { backend: ctx.backend, namespace: session.projectId, nativeId: id },
    pending: pending(ctx, rules.volumeCreate(id, requestId)),
  };
}

export async function updateVolume(
  ctx: OpenStackContext,
  ref: VolumeRef,
  patch: VolumePatch,
  o: CallOptions,
): Promise<Volume> {
  const { data } = await req.updateVolume(ctx.client, checkedUuid(ref.nativeId, inputField('volumeId')), patch, o);
  // PUT answers carry no os-vol-* keys: read back for the full view.
  return (await getVolume(ctx, ref, o)) ?? toVolume(ctx.backend, ref.namespace, data!.volume);
}

export async function deleteVolume(
  ctx: OpenStackContext,
  ref: VolumeRef,
  opts: DeleteVolumeOptions,
  o: CallOptions,
): Promise<Accepted<void>> {
  const options = deleteOptions(opts);
  const id = checkedUuid(ref.nativeId, inputField('volumeId'));
  const { requestId } = await req.deleteVolume(ctx.client, id, options, o);
  return { result: undefined, pending: pending(ctx, rules.volumeGone(id, requestId)) };
}

export async function extendVolume(
  ctx: OpenStackContext,
  ref: VolumeRef,
  newSizeBytes: number,
  o: CallOptions,
): Promise<Accepted<void>> {
  if (!Number.isSafeInteger(newSizeBytes) || newSizeBytes % GIB !== 0) {
    throw BadUserInputError.atField(
      'newSizeBytes',
      () => 'Cinder sizes are whole GiB: newSizeBytes must be a multiple of 1073741824',
    );
  }
  const newSize = newSizeBytes / GIB;
  const id = checkedUuid(ref.nativeId, inputField('volumeId'));
  const wire = await showVolume(ctx, id, o);
  if (!wire)
    throw new NotFoundError(`volume ${id} not found on backend "${ctx.backend}"`, {
      backend: ctx.backend,
      httpStatus: 404,
    });
  const current = toVolumeFacts(wire);
  if (newSize <= current.sizeGiB) {
    throw BadUserInputError.atField(
      'newSizeBytes',
      () =>
        `the new size (${newSize} GiB) must be larger than the current size (${current.sizeGiB} GiB): Cinder only grows volumes`,
    );
  }
  const { requestId } = await req.extendVolume(ctx.client, id, newSize, current.status === 'IN_USE', o);
  return { result: undefined, pending: pending(ctx, rules.volumeExtend(id, newSize, requestId)) };
}
