/** Creating, deleting and listing snapshots. A create and a delete take an idempotency key. */
import type { VolumeBackend } from '../adapters/contract/backend';
import { OperationRecordGoneError } from '../adapters/contract/errors';
import type { OperationRecord, Snapshot } from '../adapters/contract/model';
import { pageOpaque, type Edge, type PageInfo } from '../adapters/listing';
import type { GatewayContext } from './context';
import { operationId, snapshotId } from './ids';
import { oncePerKey, type IdempotencyInput } from './idempotency';
import { loadOperation, track, trackedOncePerKey } from './operations';

export interface CreateSnapshot {
  /** The checked spec, as the backend takes it (the volume to snapshot among it). */
  spec: Parameters<VolumeBackend['createSnapshot']>[0];
  idempotency: IdempotencyInput;
}

/** A snapshot being made and the operation that drives it. */
export interface SnapshotChange {
  snapshot: Snapshot;
  operation: OperationRecord;
}

/** A remembered snapshot create: the snapshot as answered and its operation's id. */
interface RememberedSnapshot {
  snapshot: Snapshot;
  operation: string;
}

export async function createSnapshot(ctx: GatewayContext, input: CreateSnapshot): Promise<SnapshotChange> {
  const b = ctx.registry.forId(input.spec.volume.backend);
  const created = await oncePerKey<RememberedSnapshot>(ctx, b.id, input.idempotency, async () => {
    const accepted = await b.createSnapshot(input.spec, ctx.call(b.id));
    const s = accepted.result;
    const operation = await track(
      ctx,
      'CREATE_SNAPSHOT',
      { backend: b.id, scope: s.scope, id: snapshotId(s) },
      accepted,
    );
    return { snapshot: s, operation: operationId(operation) };
  });
  const operation = await loadOperation(ctx, created.operation);
  if (!operation) throw new OperationRecordGoneError(input.idempotency.argument, snapshotId(created.snapshot));
  return { snapshot: created.snapshot, operation };
}

export interface DeleteSnapshot {
  /** The snapshot's global id as given: answered back, and the operation's target, unchanged. */
  id: string;
  snapshot: Parameters<VolumeBackend['deleteSnapshot']>[0];
  /** The delete's options, as the backend takes them (its own part untouched). */
  options: Parameters<VolumeBackend['deleteSnapshot']>[1];
  /** The caller's idempotency key, if any: a retry with it answers the first result. */
  idempotency?: IdempotencyInput;
}

export async function deleteSnapshot(
  ctx: GatewayContext,
  input: DeleteSnapshot,
): Promise<{ deletedId: string; operation: OperationRecord }> {
  const ref = input.snapshot;
  const b = ctx.registry.forId(ref.backend);
  return trackedOncePerKey(ctx, b.id, input.idempotency, input.id, async () => {
    const accepted = await b.deleteSnapshot(ref, input.options, ctx.call(b.id));
    return {
      deletedId: input.id,
      operation: await track(ctx, 'DELETE_SNAPSHOT', { backend: b.id, scope: ref.scope, id: input.id }, accepted),
    };
  });
}

export interface ListSnapshots {
  /** The configured backend's id. */
  backend: string;
  /** The query without its paging, as the backend takes it. */
  query: Omit<Parameters<VolumeBackend['listSnapshots']>[0], 'limit' | 'token'>;
  /** The checked page size. */
  first: number;
  /** The cursor of the page before, if any. */
  after: string | null | undefined;
}

/** One page of a backend's snapshots. */
export function listSnapshots(
  ctx: GatewayContext,
  input: ListSnapshots,
): Promise<{ edges: Edge<Snapshot>[]; pageInfo: PageInfo }> {
  const b = ctx.registry.forId(input.backend);
  return pageOpaque(
    (limit, token) => b.listSnapshots({ ...input.query, limit, token }, ctx.call(b.id)),
    input.first,
    input.after,
  );
}
