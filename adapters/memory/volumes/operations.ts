/** Volumes: list, read, create, delete, extend, update. Every call is checked against the caller's grants. */
import type { Accepted, BackendPage } from '../../contract/call-answers';
import type { CallOptions } from '../../contract/call-options';
import type { DeleteVolumeOptions, VolumeListQuery, VolumeSpec } from '../../contract/call-inputs';
import type { VolumePatch } from '../../contract/capabilities';
import { BadUserInputError } from '../../contract/errors';
import { stringMap } from '../../contract/key-values';
import type { Volume, VolumeRef } from '../../contract/model';
import { blockingStatus, existing, newId, now, transition, type MemoryContext } from '../context';
import { deleteCascades, listsByPlugin } from './input';
import { conflict } from '../errors';

const GIB = 1024 ** 3;

/** `listVolumes` of the memory backend: one page in (namespace, id) order; a token is the key of the item to resume at. */
export function volumePage(ctx: MemoryContext, q: VolumeListQuery, o: CallOptions): Promise<BackendPage<Volume>> {
  return ctx.faults.call(o, () => {
    const p = q.namespace === '*' ? ctx.access.principal(o.credential, o) : ctx.access.authorize(q.namespace, false, o);
    if (q.namespace === '*' && o.credential.token) o.onAnswer?.(200);
    if (listsByPlugin(q)) return { items: [], next: null };
    const keys = ctx.store.keys();
    let i = q.token === null ? 0 : lowerBound(keys, q.token);
    const items: BackendPage<Volume>['items'] = [];
    for (; i < keys.length; i++) {
      const v = ctx.store.volumeByKey(keys[i]!)!;
      if (q.namespace !== '*' ? v.ref.namespace !== q.namespace : !ctx.access.allows(p, v.ref.namespace, false))
        continue;
      if (q.name !== undefined && v.name !== q.name) continue;
      // The neutral "node" filter: volumes attached to this host.
      if (q.node !== undefined && !v.attachments.some((a) => a.consumer.nodeId === q.node)) continue;
      if (items.length === q.limit) return { items, next: keys[i]! };
      items.push({ item: v, position: keys[i]! });
    }
    return { items, next: null };
  });
}

function lowerBound(keys: readonly string[], key: string): number {
  let lo = 0;
  let hi = keys.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (keys[mid]! < key) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

export function getVolume(ctx: MemoryContext, ref: VolumeRef, o: CallOptions): Promise<Volume | null> {
  return ctx.faults.call(o, () => {
    ctx.access.authorize(ref.namespace, false, o);
    return ctx.store.volume(ref.namespace, ref.nativeId) ?? null;
  });
}

/** One call for the whole batch; a denial is that ref's Error, not the batch's. */
export function getVolumes(
  ctx: MemoryContext,
  refs: readonly VolumeRef[],
  o: CallOptions,
): Promise<Array<Volume | null | Error>> {
  return ctx.faults.call(o, () =>
    refs.map((ref) => {
      try {
        ctx.access.authorize(ref.namespace, false, o);
        return ctx.store.volume(ref.namespace, ref.nativeId) ?? null;
      } catch (err) {
        return err as Error;
      }
    }),
  );
}

export function createVolume(ctx: MemoryContext, spec: VolumeSpec, o: CallOptions): Promise<Accepted<VolumeRef>> {
  return ctx.faults.call(o, () => {
    ctx.access.authorize(spec.namespace, true, o);
    const id = spec.nativeId ?? newId('vol');
    const ref: VolumeRef = { backend: ctx.backend, namespace: spec.namespace, nativeId: id };
    if (ctx.store.volume(spec.namespace, id))
      throw conflict(ctx.backend, `volume ${spec.namespace}/${id} already exists on backend "${ctx.backend}"`);
    const min = spec.capacityMinBytes ?? GIB;
    if (spec.capacityMaxBytes !== undefined && spec.capacityMaxBytes < min)
      throw new BadUserInputError('the largest capacity is smaller than the smallest', 'capacityMaxBytes');
    const created = now();
    const pending = transition(
      ctx,
      ref,
      'CREATING',
      () => ({
        namespace: spec.namespace,
        id,
        name: spec.name,
        sizeBytes: min,
        description: spec.description ?? null,
        metadata: stringMap(spec.metadata ?? []),
        createdAt: created,
        attachments: [],
      }),
      (cur) => cur,
    );
    return { result: ref, pending };
  });
}

export function deleteVolume(
  ctx: MemoryContext,
  ref: VolumeRef,
  opts: DeleteVolumeOptions,
  o: CallOptions,
): Promise<Accepted<void>> {
  return ctx.faults.call(o, () => {
    ctx.access.authorize(ref.namespace, true, o);
    const d = existing(ctx, ref);
    const refuse = (why: string): never => {
      throw conflict(ctx.backend, `volume ${ref.namespace}/${ref.nativeId} cannot be deleted: ${why}`);
    };
    const held = blockingStatus(ctx, d);
    if (held && held !== 'ERROR') refuse(`it is ${held.toLowerCase()}`);
    if ((d.attachments ?? []).length > 0) refuse('it is attached (detach it first)');
    const snapshots = ctx.store
      .snapshots()
      .filter((s) => s.sourceVolume?.namespace === ref.namespace && s.sourceVolume.nativeId === ref.nativeId);
    if (snapshots.length > 0 && !deleteCascades(opts))
      refuse(`it has ${snapshots.length} snapshot(s) (delete them, or delete with cascade)`);
    const pending = transition(
      ctx,
      ref,
      'DELETING',
      (cur) => cur!,
      () => {
        for (const s of snapshots) ctx.store.changeSnapshot(s.scope, s.nativeId, null);
        return null;
      },
    );
    return { result: undefined, pending };
  });
}

export function extendVolume(
  ctx: MemoryContext,
  ref: VolumeRef,
  newSizeBytes: number,
  o: CallOptions,
): Promise<Accepted<void>> {
  return ctx.faults.call(o, () => {
    ctx.access.authorize(ref.namespace, true, o);
    const d = existing(ctx, ref);
    const held = blockingStatus(ctx, d);
    if (held)
      throw conflict(
        ctx.backend,
        `volume ${ref.namespace}/${ref.nativeId} is ${held.toLowerCase()}; extend it when that ends`,
      );
    if (newSizeBytes <= d.sizeBytes)
      throw new BadUserInputError(`the new size must be larger than the current ${d.sizeBytes} bytes`, 'newSizeBytes');
    const pending = transition(
      ctx,
      ref,
      'EXTENDING',
      (cur) => cur!,
      (cur) => ({ ...cur, sizeBytes: newSizeBytes }),
    );
    return { result: undefined, pending };
  });
}

/** Name, description and metadata change at once (no operation runs). */
export function updateVolume(ctx: MemoryContext, ref: VolumeRef, patch: VolumePatch, o: CallOptions): Promise<Volume> {
  return ctx.faults.call(o, () => {
    ctx.access.authorize(ref.namespace, true, o);
    existing(ctx, ref);
    return ctx.store.change(ref.namespace, ref.nativeId, (cur) => ({
      ...cur!,
      ...(patch.name !== undefined ? { name: patch.name } : {}),
      ...(patch.description !== undefined ? { description: patch.description } : {}),
      ...(patch.metadata !== undefined ? { metadata: stringMap(patch.metadata) } : {}),
      updatedAt: now(),
    }))!;
  });
}
