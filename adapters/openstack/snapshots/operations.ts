/** Cinder snapshots of the caller's project: list, read, create and delete. */
import type { Accepted, OpaquePage } from '../../contract/call-answers';
import type { CallOptions } from '../../contract/call-options';
import type { DeleteSnapshotOptions, SnapshotListQuery, SnapshotRef, SnapshotSpec } from '../../contract/call-inputs';
import { inputField } from '../../contract/errors';
import type { Snapshot } from '../../contract/model';
import * as req from '../cinder/requests';
import { nextMarker, toSnapshot, type CinderSnapshot } from '../cinder/results';
import { rules } from '../completion/rules';
import { orNull, pending, type OpenStackContext } from '../context';
import { checkedUuid, UUID } from '../ids';
import { MAX_LIMIT, marker } from '../paging';
import { checkDeleteInput, checkListInput, snapshotForce } from './input';

export async function listSnapshots(
  ctx: OpenStackContext,
  q: SnapshotListQuery,
  o: CallOptions,
): Promise<OpaquePage<Snapshot>> {
  checkListInput(q);
  const { projectId } = await ctx.client.session(o);
  // Another project's volume has no snapshots this token can see.
  if (q.volume && q.volume.namespace !== projectId) return { items: [], next: null };
  const volumeId = q.volume ? checkedUuid(q.volume.nativeId, 'volume') : undefined;
  const { data } = await req.listSnapshotsDetail(
    ctx.client,
    { limit: Math.min(q.limit, MAX_LIMIT), marker: marker(q.token), filters: req.snapshotFilters({ volumeId }) },
    o,
  );
  const list = data?.snapshots ?? [];
  return {
    items: list.map((s) => toSnapshot(ctx.backend, projectId, s)),
    next: nextMarker(list, data?.snapshots_links),
  };
}

/** Cinder's view of one snapshot; null when it does not exist for the caller. */
export async function showSnapshot(ctx: OpenStackContext, id: string, o: CallOptions): Promise<CinderSnapshot | null> {
  // Cinder ids are UUIDs: anything else cannot exist.
  if (!UUID.test(id)) return null;
  return (await orNull(req.showSnapshot(ctx.client, id, o)))?.data?.snapshot ?? null;
}

export async function getSnapshot(ctx: OpenStackContext, ref: SnapshotRef, o: CallOptions): Promise<Snapshot | null> {
  const s = await showSnapshot(ctx, ref.nativeId, o);
  return s ? toSnapshot(ctx.backend, ref.scope, s) : null;
}

export async function createSnapshot(
  ctx: OpenStackContext,
  spec: SnapshotSpec,
  o: CallOptions,
): Promise<Accepted<Snapshot>> {
  const force = snapshotForce(spec);
  const { projectId } = await ctx.client.session(o);
  const input: req.CreateSnapshotInput = {
    volumeId: checkedUuid(spec.volume.nativeId, inputField('volumeId')),
    name: spec.name,
    description: spec.description,
    force,
  };
  const { data, requestId } = await req.createSnapshot(ctx.client, input, o);
  const snap = toSnapshot(ctx.backend, projectId, data!.snapshot);
  return { result: snap, pending: pending(ctx, rules.snapshotCreate(snap.nativeId, requestId)) };
}

export async function deleteSnapshot(
  ctx: OpenStackContext,
  ref: SnapshotRef,
  opts: DeleteSnapshotOptions,
  o: CallOptions,
): Promise<Accepted<void>> {
  checkDeleteInput(opts);
  const id = checkedUuid(ref.nativeId, inputField('snapshotId'));
  const { requestId } = await req.deleteSnapshot(ctx.client, id, o);
  return { result: undefined, pending: pending(ctx, rules.snapshotDelete(id, requestId)) };
}
