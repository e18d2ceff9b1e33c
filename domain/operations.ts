/**
 * Tracked operations: how a use case hands its accepted change to the tracker, reads the changed
 * volume back, and which operations a caller may see.
 */
import type { Accepted } from '../adapters/contract/call-answers';
import { OperationRecordGoneError } from '../adapters/contract/errors';
import { decodeGlobalId } from '../adapters/contract/ids';
import type { OperationKind, OperationRecord, Snapshot, Volume, VolumeRef } from '../adapters/contract/model';
import type { GatewayContext } from './context';
import { ownerKey } from '../subscriptions/operations';
import { operationId, volumeId } from './ids';
import { oncePerKey, type IdempotencyInput } from './idempotency';

/** What an operation acts on. */
export interface OperationTarget {
  backend: string;
  scope: string;
  /** Global id of the volume or snapshot. */
  id: string;
}

/** A volume as an operation's target. */
export const target = (ref: VolumeRef): OperationTarget => ({
  backend: ref.backend,
  scope: ref.namespace,
  id: volumeId(ref),
});

/**
 * Hands a use case's pending work (or its synchronous success) to the tracker. A volume's change is
 * also told to the live path, so the events it causes are linked to this mutation's trace.
 */
export function track(
  ctx: GatewayContext,
  kind: OperationKind,
  target: OperationTarget,
  accepted: Accepted<unknown>,
): Promise<OperationRecord> {
  if (ctx.live) {
    const t = decodeGlobalId(target.id, null);
    if (t.kind === 'Volume') ctx.live.changing({ backend: t.backend, namespace: t.scope, nativeId: t.nativeId });
  }
  return ctx.operations.start({
    kind,
    backend: target.backend,
    scope: target.scope,
    targetId: target.id,
    credential: ctx.call(target.backend).credential,
    requestId: ctx.requestId,
    pending: accepted.pending,
  });
}

/** The work a backend finished before answering. */
export const done = <T>(result: T): Accepted<T> => ({ result, pending: null });

/** The volume read after a change (a failed read leaves it null: the change itself went through). */
export async function readBack(ctx: GatewayContext, ref: VolumeRef): Promise<Volume | null> {
  ctx.loaders.volume.clear(ref);
  return ctx.loaders.volume.load(ref).catch(() => null);
}

/** Whether the caller may see the operation: they started it, or can read its target now. */
async function visible(ctx: GatewayContext, r: OperationRecord): Promise<boolean> {
  if (r.owner === ownerKey(r.backend, ctx.call(r.backend).credential)) return true;
  const t = decodeGlobalId(r.targetId, null);
  if (t.kind !== 'Volume') return false;
  const v = await ctx.loaders.volume
    .load({ backend: t.backend, namespace: t.scope, nativeId: t.nativeId })
    .catch(() => null);
  return v !== null;
}

/** An operation the caller may see; anything else is reported as absent, like an unknown id. */
export async function loadOperation(ctx: GatewayContext, id: string, argument = 'id'): Promise<OperationRecord | null> {
  const p = decodeGlobalId(id, 'Operation', argument);
  ctx.registry.forId(p.backend);
  const r = await ctx.operations.get(p.nativeId);
  if (!r || r.backend !== p.backend) return null;
  return (await visible(ctx, r)) ? r : null;
}

/** Operations on a target the caller has already read (so may see), newest first. */
export async function operationsOf(ctx: GatewayContext, targetId: string): Promise<OperationRecord[]> {
  const records = await ctx.operations.forTarget(targetId);
  return [...records].sort((a, b) => b.createdAt - a.createdAt);
}

/**
 * An operation's target, through the same loaders as `volume(id)` (an operation's target and the
 * volume agree within an execution); null when gone, unreadable, or a snapshot the backend cannot read.
 */
export async function operationTarget(ctx: GatewayContext, r: OperationRecord): Promise<Volume | Snapshot | null> {
  const t = decodeGlobalId(r.targetId, null);
  if (t.kind === 'Volume')
    return ctx.loaders.volume.load({ backend: t.backend, namespace: t.scope, nativeId: t.nativeId }).catch(() => null);
  if (t.kind === 'Snapshot' && ctx.registry.forId(t.backend).snapshotReads)
    return ctx.loaders.snapshot.load({ backend: t.backend, scope: t.scope, nativeId: t.nativeId }).catch(() => null);
  return null;
}

/**
 * Runs a tracked change once per idempotency key (domain/idempotency.ts). `change` answers the
 * operation it started and any JSON its answer needs; the operation is remembered by id, so a retry
 * with the same key answers the same operation, read again, instead of changing again.
 * `targetId` names what the change acted on (or made, from the remembered answer), for the error when
 * the remembered operation is gone.
 */
export async function trackedOncePerKey<R extends object>(
  ctx: GatewayContext,
  backend: string,
  idempotency: IdempotencyInput | undefined,
  targetId: string | ((remembered: R) => string),
  change: () => Promise<R & { operation: OperationRecord }>,
): Promise<R & { operation: OperationRecord }> {
  let fresh: OperationRecord | undefined;
  const remembered = await oncePerKey(ctx, backend, idempotency, async () => {
    const { operation, ...rest } = await change();
    fresh = operation;
    return { ...rest, operation: operationId(operation) };
  });
  const operation = fresh ?? (await loadOperation(ctx, remembered.operation));
  const answer = remembered as unknown as R;
  if (!operation)
    throw new OperationRecordGoneError(
      idempotency?.argument ?? 'input',
      typeof targetId === 'string' ? targetId : targetId(answer),
    );
  return { ...answer, operation };
}
