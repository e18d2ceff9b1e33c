/** Snapshots: of a volume, in its namespace; listed in (namespace, id) order. */
import type { Accepted, OpaquePage } from '../../contract/call-answers';
import type { CallOptions } from '../../contract/call-options';
import type { SnapshotListQuery, SnapshotRef, SnapshotSpec } from '../../contract/call-inputs';
import type { Snapshot } from '../../contract/model';
import { existing, newId, now, type MemoryContext } from '../context';
import { notFound } from '../errors';

const key = (s: Snapshot): string => `${s.scope}/${s.nativeId}`;

export function listSnapshots(ctx: MemoryContext, q: SnapshotListQuery, o: CallOptions): Promise<OpaquePage<Snapshot>> {
  return ctx.faults.call(o, () => {
    const p = q.volume ? ctx.access.authorize(q.volume.namespace, false, o) : ctx.access.principal(o.credential, o);
    const all = ctx.store
      .snapshots()
      .filter((s) =>
        q.volume
          ? s.scope === q.volume.namespace && s.sourceVolume?.nativeId === q.volume.nativeId
          : ctx.access.allows(p, s.scope, false),
      )
      .filter((s) => q.token === null || key(s) >= q.token);
    return { items: all.slice(0, q.limit), next: all.length > q.limit ? key(all[q.limit]!) : null };
  });
}

export function getSnapshot(ctx: MemoryContext, ref: SnapshotRef, o: CallOptions): Promise<Snapshot | null> {
  return ctx.faults.call(o, () => {
    ctx.access.authorize(ref.scope, false, o);
    return ctx.store.snapshot(ref.scope, ref.nativeId) ?? null;
  });
}

/** The snapshot is `ready: false` until the delay has passed. */
export function createSnapshot(ctx: MemoryContext, spec: SnapshotSpec, o: CallOptions): Promise<Accepted<Snapshot>> {
  return ctx.faults.call(o, () => {
    const { namespace, nativeId } = spec.volume;
    ctx.access.authorize(namespace, true, o);
    const v = existing(ctx, spec.volume);
    const s = {
      namespace,
      id: newId('snap'),
      volumeId: nativeId,
      name: spec.name,
      sizeBytes: v.sizeBytes,
      description: spec.description ?? null,
      createdAt: now(),
    };
    const waits = ctx.changes.delayMs > 0;
    ctx.store.changeSnapshot(namespace, s.id, { ...s, ready: !waits });
    const pending = waits
      ? ctx.changes.start(() => {
          if (!ctx.store.snapshot(namespace, s.id))
            return `snapshot ${namespace}/${s.id} is gone (deleted or the data were reset)`;
          ctx.store.changeSnapshot(namespace, s.id, { ...s, ready: true });
        })
      : null;
    return { result: ctx.store.snapshot(namespace, s.id)!, pending };
  });
}

export function deleteSnapshot(ctx: MemoryContext, ref: SnapshotRef, o: CallOptions): Promise<Accepted<void>> {
  return ctx.faults.call(o, () => {
    ctx.access.authorize(ref.scope, true, o);
    if (!ctx.store.snapshot(ref.scope, ref.nativeId))
      throw notFound(ctx.backend, `snapshot ${ref.scope}/${ref.nativeId} does not exist on backend "${ctx.backend}"`);
    const pending = ctx.changes.start(() => ctx.store.changeSnapshot(ref.scope, ref.nativeId, null));
    return { result: undefined, pending };
  });
}
